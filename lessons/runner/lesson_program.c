/* lesson_program.c - main() of build/lessonN: the Makefile compiles this file once per lesson with
 * -DLESSON_DEF=lessonN_def, so every lesson binary is the same generic program over its own definition. */
#include "lesson.h"
#include "gemm_cpu.h"

#ifndef LESSON_DEF
#error "compile with -DLESSON_DEF=lessonN_def"
#endif

extern const lesson LESSON_DEF;

/* The CPU GEMM libraries' idle workers are told to sleep before they exist (gemm_cpu.h): a re-execution, so
 * it is here and not in lesson_main, which the test suites call inside their own processes. */
int main(int argc, char **argv)
{
    gemm_cpu_exec_with_sleeping_workers(argv);
    return lesson_main(&LESSON_DEF, argc, argv);
}
