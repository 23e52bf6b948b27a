# The gdb walk of docs/lesson-2.md, checked by `make check-docs` (gdb -batch against
# `make gdb-build`'s build, build/debug: -O0 -g3, CPU only).
# program: lesson2
# args: --size small --impl naive,cpu
# naive: the forum's tree. Its middle is every row's own copy of every log matrix, n*t*(v-1)*c*c floats.
break naive_lc_forward
run
#=> stop naive_lc_forward
print *d
#=> print {n = 10, t = 1, v = 6, c = 40}
print d->n * d->t * (d->v - 1) * d->c * d->c
#=> print = 80000
# One tree level: 5 matrices pair into 2, the odd one is carried up; then 3 -> 1 (+1), then 2 -> 1.
break level_forward
continue
#=> stop level_forward
print *L
#=> print {N = 10, c = 40, m = 5, pairs = 2, carry = 1}
print l
#=> print = 0
# Each pair product allocates exp'd operands and the product, all saved for backward.
break log_product
continue
#=> stop log_product
finish
#=> stop level_forward
continue
#=> stop level_forward
print *L
#=> print m = 3
delete
# Backward walks the levels from the top.
break naive_lc_backward
continue
#=> stop naive_lc_backward
print sv->levels
#=> print = 3
print sv->m[0]@3
#=> print = {5, 3, 2}
# cpu: the forward algorithm; one (n, c) x (c, c) GEMM per step for the whole batch.
break cpu_lc_forward
continue
#=> stop cpu_lc_forward
break sgemm_cpu
continue
#=> stop sgemm_cpu
print M
#=> print = 10
print N
#=> print = 40
up
#=> stop cpu_lc_forward
