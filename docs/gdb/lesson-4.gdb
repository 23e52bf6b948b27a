# The gdb walk of docs/lesson-4.md, checked by `make check-docs` (gdb -batch against
# `make gdb-build`'s build, build/debug: -O0 -g3, CPU only).
# program: lesson4
# args: --size tiny --impl naive,cpu
# naive: the forum's eager loop. Every step allocates its own tensors; autograd keeps their pointers.
break forward_step
run
#=> stop forward_step
print *d
#=> print /T = \d+, B = \d+, X = \d+, H = \d+/
up
#=> stop naive_gru_forward
print t
#=> print = 0
# Each step's tensors stay alive until backward: one step later the live bytes have grown by 10H per row.
set $before = 'track.c'::counters[0].live_bytes
continue
#=> stop forward_step
up
#=> stop naive_gru_forward
print t
#=> print = 1
print 'track.c'::counters[0].live_bytes - $before
#=> print = 320
print 10 * d->B * d->H * 4
#=> print = 320
delete
break naive/gru_eager.c:step_backward
continue
#=> stop step_backward
print t == d->T - 1
#=> print = 1
# cpu: one arena, sized by planning passes of the same carve (no memory), carved once before the loop;
# forward_range then runs every step without allocating: S, xp, zp, hs are the arena's slices.
delete
break forward_range
continue
#=> stop forward_range
print *ws
#=> print /cap = \d+, P = \d+, S = 0x[0-9a-f]+, xp = 0x[0-9a-f]+/
# Without --checkpoint the arena holds a row of 6H for every step: cap = T.
print ws->cap == d->T
#=> print = 1
up
#=> stop cpu_gru_forward
# The fused cell's backward: the element math shared with the CUDA kernels (kernels/gru_cell_math.h).
break optimized/gru_fused.c:step_backward
continue
#=> stop step_backward
break gru_gate_backward
continue
#=> stop gru_gate_backward
print s
#=> print /r = -?[\d.e-]+, u = -?[\d.e-]+/
