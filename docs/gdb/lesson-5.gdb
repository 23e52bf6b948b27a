# The gdb walk of docs/lesson-5.md, checked by `make check-docs` (gdb -batch against
# `make gdb-build`'s build, build/debug: -O0 -g3, CPU only).
# program: lesson5
# args: --size tiny --impl naive,cpu
# naive runs first: stop once in its dW step, the seed's grad_weight += mm(g^T, x_chunk).float()
tbreak chunk_grad_weight
run
#=> stop chunk_grad_weight
print *d
#=> print {N = 4, H = 3, V = 7, chunk = 2
print o->rows
#=> print = 2
# the bf16 product and its f32 copy that this call allocates: V*H*6 bytes (the output's "V*H*6 = 126 bytes")
print d->V * d->H * 6
#=> print = 126
# pass 1, the product: a GEMM with beta = 0 into scratch, which is then rounded to bf16
tbreak lce_dw_panel
continue
#=> stop lce_dw_panel
print beta
#=> print = 0
bt 2
#=> print chunk_grad_weight
# cpu: one block of k = ceil(128/2) chunks, capped at N = 4 rows; its row pass works on f32 logits
break cpu_lce_rows
continue
#=> stop cpu_lce_rows
print rows
#=> print = 4
print scale
#=> print = 0.333333343
# finish returns to cpu_block, where the block's logits buffer is still in view: row r's bf16 gradient is
# written over the first half of its own f32 row (7 bf16 at byte 28*r). Row 1 is ignored (-100), so n_valid = 3 and
# scale = 1/3; row 0's target is 0, the one negative entry 0xbe8a
finish
#=> stop cpu_block
print *target@4
#=> print {0, -100, 5, 5}
x/7hx w->logits
#=> print /0xbe8a\s+0x3c4a\s+0x3da4\s+0x3d42\s+0x3dbb\s+0x3ce1\s+0x3c33/
# naive is done by now, so this stops in cpu's dW GEMM: the in-place accumulation, beta = 1, into grad_weight
break lce_dw_panel
continue
#=> stop lce_dw_panel
print beta
#=> print = 1
up
#=> stop cpu_block
print v0
#=> print = 0
