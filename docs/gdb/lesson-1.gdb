# The gdb walk of docs/lesson-1.md. Every stop and printed value below is checked by `make check-docs`
# (docs/tools/check_gdb_walks.py runs this file in gdb -batch against `make gdb-build`'s build, build/debug).
# program: lesson1
# args: --dims B=1000,G=8,K=64,N=48 --impl naive,cpu
# Every allocation of 64 MiB or more stops here: W_expanded in forward, dW_expanded in backward.
break track_register if bytes >= 1<<26
break naive_bmm_forward
break cpu_bmm_forward
run
#=> stop naive_bmm_forward
print *d
#=> print {B = 1000, G = 8, K = 64, N = 48}
print d->B * d->G * d->K * d->N
#=> print = 24576000
continue
#=> stop track_register
print label
#=> print "W_expanded (B*G,K,N) saved for backward"
print bytes
#=> print = 98304000
bt 4
#=> print naive_bmm_forward
continue
#=> stop track_register
print label
#=> print "dW_expanded (B*G,K,N)"
bt 4
#=> print naive_bmm_backward
continue
#=> stop cpu_bmm_forward
# The fix: one strided-batched GEMM over views of x, read in place: a row of x is G·K floats (lda), and group g
# starts K floats further on (strideA); out's rows are G·N floats (ldc).
break sgemm_cpu_strided_batched
continue
#=> stop sgemm_cpu_strided_batched
print lda
#=> print = 512
print strideA
#=> print = 64
print ldc
#=> print = 384
print batch
#=> print = 8
