/* lesson_program.c - main() of build/lessonN: the Makefile compiles this file once per lesson with
 * -DLESSON_DEF=lessonN_def, so every lesson binary is the same generic program over its own definition. */
#include "lesson.h"

#ifndef LESSON_DEF
#error "compile with -DLESSON_DEF=lessonN_def"
#endif

extern const lesson LESSON_DEF;

int main(int argc, char **argv) { return lesson_main(&LESSON_DEF, argc, argv); }
