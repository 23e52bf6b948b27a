# The gdb walk of docs/lesson-3.md, checked by `make check-docs` (gdb -batch against
# `make gdb-build`'s build, build/debug: -O0 -g3, CPU only).
# program: lesson3
# args: --size tiny --impl naive,cpu
# naive first: the einsum's [I,J,M,N] scores are one allocation of I*J*M*N floats.
break naive_ms_forward
run
#=> stop naive_ms_forward
print *d
#=> print {I = 2, J = 3, M = 2, N = 4, K = 3}
print d->I * d->J * d->M * d->N
#=> print = 48
# Stop at every tracked allocation of 192 bytes or more: 48 floats of 4 bytes is the [I,J,M,N] tensor here.
break track_register if bytes >= 192
continue
#=> stop track_register
print label
#=> print "scores [I,J,M,N] f32 (einsum result)"
print bytes
#=> print = 192
bt 4
#=> print naive_ms_forward
# MaxBackward keeps int64 indices [I,J,M]; the scores are freed at the end of forward.
break naive_ms_backward
continue
#=> stop naive_ms_backward
print saved->idx[0]@12
#=> print /= \{-?\d+(, -?\d+){11}\}/
# MaxBackward makes the 4-D tensor again: zeros of the scores' shape, dout scattered at the indices.
continue
#=> stop track_register
print label
#=> print "dscores [I,J,M,N] f32 (zeros + scatter)"
bt 4
#=> print naive_ms_backward
# cpu: the same forward without the 4-D tensor.
break cpu_ms_forward
continue
#=> stop cpu_ms_forward
print recompute
#=> print = 0
# Its one large allocation is the scratch block: one tile of scores (up to 256 x 512) and the running max/argmax.
# At this tiny size one tile covers all 48 scores; at medium it is 528,384 bytes against naive's 268,435,456.
continue
#=> stop track_register
print label
#=> print "scratch: scores tile + running max/argmax"
print bytes
#=> print = 560
delete 2
# cpu: tiles of (i,j) x (m,n) reduced to max/argmax as they are made; no [I,J,M,N] anywhere.
break tile_chunk
continue
#=> stop tile_chunk
print nr
#=> print = 6
print nm
#=> print = 2
finish
#=> stop tile_argmax
print sc->best[0]@2
#=> print /= \{-?[\d.]+, -?[\d.]+\}/
print sc->barg[0]@2
#=> print /= \{\d, \d\}/
# What survives until backward: the int32 argmax [I,J,M] = [2,3,2], 12 entries of 4 bytes.
break cpu_ms_backward
continue
#=> stop cpu_ms_backward
print saved->arg[0]@12
#=> print /= \{\d(, \d){11}\}/
