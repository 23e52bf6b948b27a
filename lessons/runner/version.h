/* version.h - what --version prints and meta.json records: the program's version (raised by hand when the
 * command line, the CSV columns or the --dump files change) and the git commit it was built from. The
 * Makefile writes LESSON_GIT_DESCRIBE into build/obj/<mode>/gen/git_describe.h (`git describe --always
 * --dirty` at build time, "unknown" outside a git checkout); a compile without it says "unknown". */
#ifndef LESSONS_VERSION_H
#define LESSONS_VERSION_H

#define LESSON_VERSION "1.1"

#if defined(__has_include)
#if __has_include("git_describe.h")
#include "git_describe.h"
#endif
#endif
#ifndef LESSON_GIT_DESCRIBE
#define LESSON_GIT_DESCRIBE "unknown"
#endif

#endif
