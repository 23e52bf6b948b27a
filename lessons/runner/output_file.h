/* output_file.h - every file a lesson writes is whole or absent.
 *
 * An output (--csv, --times, --timeline, --snapshot, each --dump file) is written to a temporary file beside
 * its path (".<name>.XXXXXX" in the same directory, so the rename that completes it is atomic) and renamed
 * over the path only when the whole run's outputs reached their files: every write, fflush and fclose is
 * checked. Until then each path keeps what it held before the run (nothing, or an earlier run's file). A run
 * whose outputs fail, that exits on an allocation failure (exit 3) or is stopped by SIGINT or SIGTERM removes
 * its temporaries and any directory it created for --dump that is still empty, so nothing half-written, empty
 * or stale is left behind.
 *
 * A path that exists and is not a regular file (a character device: /dev/null, /dev/full, a terminal; a FIFO)
 * is written in place: there is no file to replace, only a stream to check.
 */
#ifndef LESSONS_OUTPUT_FILE_H
#define LESSONS_OUTPUT_FILE_H

#include <stdio.h>

typedef struct output_file output_file;

/* The cleanup of a run: SIGINT and SIGTERM handlers and an atexit hook that remove every temporary still open
 * (then the signal ends the program as it would have). program prefixes the messages. */
void output_init(const char *program);

/* A temporary for path; what ("--csv", "--dump", ...) names it in messages. keep_existing: the temporary
 * starts as a copy of path's content (--csv and --times append). NULL after one message on failure. */
output_file *output_open(const char *what, const char *path, int keep_existing);
FILE *output_stream(const output_file *f);

/* Flushes and closes the stream, checking that everything reached the file; -1 after one message naming the
 * output. The file stays a temporary until output_publish. */
int output_close(output_file *f);

/* Renames every closed temporary over its path, in the order opened; -1 after a message if a rename fails. */
int output_publish(void);

/* Removes every temporary and the directories output_make_dir created that are still empty; each path keeps
 * what it held before the run. */
void output_discard(void);

/* mkdir -p dir for --dump; the directories it creates are removed by output_discard (and on a signal or exit)
 * while empty. 0, or -1 with errno set (ENOTDIR: dir exists and is not a directory). */
int output_make_dir(const char *dir);

/* Whether two output paths name one file: the same text, the same directory and name once the directory is
 * resolved, or (both existing) the same inode. Character devices (/dev/null) are never one output. */
int output_same_path(const char *a, const char *b);

#endif
