/* output_file.c - temporaries beside each output, renamed over it when the run's outputs are complete
 * (output_file.h). The registry is static so that a signal handler can remove what it names: unlink and rmdir
 * are async-signal-safe, and an entry is counted before its temporary exists, so none is missed. */
#define _DEFAULT_SOURCE /* realpath, fchmod, lstat */
#include "output_file.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTPUT_PATH 4096
/* --csv, --times, --timeline, --snapshot, and --dump's inputs, every implementation's results and
 * meta.json */
#define OUTPUT_MAX 320
#define OUTPUT_DIRS 32

enum { SLOT_OPEN = 1, SLOT_CLOSED, SLOT_GONE };

struct output_file {
    char tmp[OUTPUT_PATH];   /* the temporary; "" when the path is written in place (a device, a FIFO) */
    char path[OUTPUT_PATH];  /* where it goes: the path given, a symbolic link resolved */
    char name[OUTPUT_PATH];  /* the path as given, for messages */
    const char *what;
    FILE *f;
    volatile sig_atomic_t state;
};

static output_file files[OUTPUT_MAX];
static volatile sig_atomic_t nfiles;
static char made_dirs[OUTPUT_DIRS][OUTPUT_PATH];
static volatile sig_atomic_t ndirs;
static const char *program = "lesson";
static mode_t new_file_mode = 0644;

/* Async-signal-safe: unlink and rmdir only, over entries already counted. */
static void remove_temporaries(void)
{
    for (sig_atomic_t i = 0; i < nfiles; i++)
        if (files[i].state != SLOT_GONE && files[i].tmp[0]) unlink(files[i].tmp);
    /* deepest first; fails harmlessly if not empty */
    for (sig_atomic_t d = ndirs; d-- > 0;) rmdir(made_dirs[d]);
}

static void on_signal(int sig)
{
    remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig); /* the status a shell reports for the signal (130 for SIGINT) */
}

/* exit(3) on an allocation failure, or any other exit before the outputs were published */
static void on_exit_hook(void) { remove_temporaries(); }

void output_init(const char *prog)
{
    static int hooked;
    program = prog;
    mode_t mask = umask(022);
    umask(mask);
    new_file_mode = 0666 & ~mask; /* what fopen would have created: mkstemp makes 0600 */
    if (hooked++) return;
    atexit(on_exit_hook);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* a signal ignored at start stays ignored (nohup, a shell's background job) */
    for (int k = 0; k < 2; k++) {
        int sig = k ? SIGTERM : SIGINT;
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(sig, &sa, NULL);
    }
}

static int fail_open(output_file *o, int err)
{
    o->state = SLOT_GONE;
    fprintf(stderr, "%s: cannot write %s %s: %s\n", program, o->what, o->name, strerror(err));
    return -1;
}

/* The temporary starts as a copy of what path holds (an appended CSV keeps its rows). */
static int copy_into(FILE *to, const char *path)
{
    FILE *from = fopen(path, "rb");
    if (!from) return -1;
    char buf[1 << 16];
    size_t n;
    int ok = 1;
    while (ok && (n = fread(buf, 1, sizeof buf, from)) > 0) ok = fwrite(buf, 1, n, to) == n;
    ok = ok && !ferror(from);
    fclose(from);
    return ok ? 0 : -1;
}

output_file *output_open(const char *what, const char *path, int keep_existing)
{
    if (nfiles == OUTPUT_MAX || strlen(path) + 16 >= OUTPUT_PATH) {
        fprintf(stderr, "%s: cannot write %s %s: %s\n", program, what, path,
                nfiles == OUTPUT_MAX ? "too many output files" : strerror(ENAMETOOLONG));
        return NULL;
    }
    output_file *o = &files[nfiles];
    o->state = SLOT_GONE;
    o->tmp[0] = '\0';
    o->what = what;
    o->f = NULL;
    snprintf(o->name, sizeof o->name, "%s", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    struct stat st;
    char *resolved = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
    if (resolved && strlen(resolved) + 16 < OUTPUT_PATH) snprintf(o->path, sizeof o->path, "%s", resolved);
    free(resolved);
    int exists = stat(o->path, &st) == 0;
    nfiles++;
    if (exists && S_ISDIR(st.st_mode)) return fail_open(o, EISDIR), NULL;
    if (exists && !S_ISREG(st.st_mode)) { /* a device or a FIFO: nothing to replace, the stream is checked */
        o->f = fopen(o->path, keep_existing ? "a" : "w");
        if (!o->f) return fail_open(o, errno), NULL;
        o->state = SLOT_OPEN;
        return o;
    }
    const char *slash = strrchr(o->path, '/');
    int dirlen = slash ? (int)(slash - o->path) + 1 : 0;
    char name[OUTPUT_PATH]; /* a copy: snprintf's source may not lie in the slot it writes */
    snprintf(name, sizeof name, "%s", o->path + dirlen);
    memcpy(o->tmp, o->path, (size_t)dirlen); /* "<dir>/.<name>.XXXXXX" */
    snprintf(o->tmp + dirlen, sizeof o->tmp - (size_t)dirlen, ".%s.XXXXXX", name);
    o->state = SLOT_OPEN; /* counted before it exists: a signal from here on removes it */
    int fd = mkstemp(o->tmp);
    if (fd < 0) return o->tmp[0] = '\0', fail_open(o, errno), NULL;
    if (fchmod(fd, exists ? st.st_mode & 07777 : new_file_mode) != 0 || !(o->f = fdopen(fd, "wb"))) {
        int err = errno;
        close(fd);
        unlink(o->tmp);
        return fail_open(o, err), NULL;
    }
    if (keep_existing && exists && copy_into(o->f, o->path) != 0) {
        int err = errno ? errno : EIO;
        fclose(o->f);
        unlink(o->tmp);
        return fail_open(o, err), NULL;
    }
    return o;
}

FILE *output_stream(const output_file *f) { return f->f; }

int output_close(output_file *o)
{
    if (o->state != SLOT_OPEN) return 0;
    errno = 0;
    /* ferror: a write before the last one failed */
    int lost = fflush(o->f) != 0 || ferror(o->f), err = errno;
    if (fclose(o->f) != 0 && !lost) lost = 1, err = errno;
    o->f = NULL;
    o->state = SLOT_CLOSED;
    if (!lost) return 0;
    fprintf(stderr, "%s: writing %s %s failed: %s\n", program, o->what, o->name,
            err ? strerror(err) : "a write did not complete");
    return -1;
}

int output_publish(void)
{
    int rc = 0;
    for (sig_atomic_t i = 0; i < nfiles; i++) {
        output_file *o = &files[i];
        if (o->state == SLOT_OPEN && output_close(o) != 0) rc = -1;
    }
    for (sig_atomic_t i = 0; i < nfiles && rc == 0; i++) {
        output_file *o = &files[i];
        if (o->state != SLOT_CLOSED || !o->tmp[0]) continue;
        if (rename(o->tmp, o->path) != 0) {
            fprintf(stderr, "%s: writing %s %s failed: renaming %s: %s\n", program, o->what, o->name, o->tmp,
                    strerror(errno));
            rc = -1;
            continue;
        }
        o->state = SLOT_GONE;
    }
    if (rc != 0) {
        output_discard();
        return -1;
    }
    nfiles = 0;
    ndirs = 0; /* the directories now hold the outputs */
    return 0;
}

void output_discard(void)
{
    for (sig_atomic_t i = 0; i < nfiles; i++) {
        output_file *o = &files[i];
        if (o->state == SLOT_OPEN) fclose(o->f);
        o->f = NULL;
    }
    remove_temporaries();
    nfiles = 0;
    ndirs = 0;
}

int output_make_dir(const char *dir)
{
    char buf[OUTPUT_PATH];
    if (strlen(dir) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, dir);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, 0777) == 0) { /* 0777 less the umask, as mkdir(1) */
            if (ndirs < OUTPUT_DIRS) {
                strcpy(made_dirs[ndirs], buf);
                ndirs++;
            }
        } else if (errno != EEXIST) {
            return -1;
        }
        *p = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(dir, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* The directory resolved (realpath), then the last name: where a file that does not exist yet would go. */
static void canonical(const char *p, char *out, size_t len)
{
    const char *slash = strrchr(p, '/');
    char dir[OUTPUT_PATH];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - p) + (slash == p) : 1, slash ? p : ".");
    char *r = realpath(dir, NULL);
    snprintf(out, len, "%s/%s", r ? r : dir, slash ? slash + 1 : p);
    free(r);
}

int output_same_path(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if ((ea && S_ISCHR(sa.st_mode)) || (eb && S_ISCHR(sb.st_mode))) return 0;
    if (strcmp(a, b) == 0) return 1;
    if (ea != eb) return 0;
    if (ea) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[2 * OUTPUT_PATH], cb[2 * OUTPUT_PATH];
    canonical(a, ca, sizeof ca);
    canonical(b, cb, sizeof cb);
    return strcmp(ca, cb) == 0;
}
