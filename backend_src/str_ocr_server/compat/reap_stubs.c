/* Reaps the dead Python backend stubs that tritonserver never waits for.
 *
 * The launcher loads this library into tritonserver (LD_PRELOAD; str_ocr_server.compat.stub_reaper) and writes to it, through
 * a pipe whose read end is STR_OCR_REAP_FD, the pids of the stubs of each version it replaced after a crash, one
 * per line. This server release never destroys such a version (a request handed to the dead instance holds it for
 * good), so only the server's own process can wait for those stubs: this library's thread does, for a pid that is
 * a child of the server and already dead.
 *
 * Waiting frees the pid for reuse, and the backend would still SIGKILL and wait for "its" stub if it ever destroyed
 * the version: so kill() and waitpid() answer for a reaped pid as they would have for the zombie (the kill is not
 * sent, the wait returns the saved status), until the server forks a new process that gets the same pid.
 *
 * The children tritonserver starts do not inherit the library: it sets LD_PRELOAD back to STR_OCR_LD_PRELOAD. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPACITY 4096 /* reaped pids remembered; with all taken, a stub is left a zombie */

static struct {
    pid_t pid;
    int status;
} reaped[CAPACITY];
static int count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static pid_t (*real_waitpid)(pid_t, int *, int);
static int (*real_kill)(pid_t, int);
static pid_t (*real_fork)(void);

static void find_real(void) { /* also from a call made before the constructor ran */
    if (real_fork)
        return;
    real_waitpid = dlsym(RTLD_NEXT, "waitpid");
    real_kill = dlsym(RTLD_NEXT, "kill");
    real_fork = dlsym(RTLD_NEXT, "fork");
}

/* Index of pid among the reaped, or -1; lock held. */
static int find(pid_t pid) {
    for (int i = 0; i < count; i++)
        if (reaped[i].pid == pid)
            return i;
    return -1;
}

static void forget(int i) { reaped[i] = reaped[--count]; }

/* Waits for pid if it is a dead child; remembers what the wait said. A stub's main thread shows as a zombie while
 * its other threads are still exiting, and until they have, the wait finds nothing: it is tried again, for 10 s. */
static void reap(pid_t pid) {
    for (int attempt = 0; attempt < 100; attempt++) {
        int status;
        pthread_mutex_lock(&lock);
        pid_t waited = pid > 0 && count < CAPACITY && find(pid) < 0 ? real_waitpid(pid, &status, WNOHANG) : -1;
        if (waited == pid)
            reaped[count++] = (typeof(reaped[0])){pid, status};
        pthread_mutex_unlock(&lock);
        if (waited != 0) /* reaped, or not a dead child of this process */
            return;
        usleep(100 * 1000);
    }
}

pid_t waitpid(pid_t pid, int *status, int options) {
    find_real();
    if (pid > 0) {
        pthread_mutex_lock(&lock);
        int i = find(pid);
        if (i >= 0) {
            if (status)
                *status = reaped[i].status;
            forget(i);
        }
        pthread_mutex_unlock(&lock);
        if (i >= 0)
            return pid;
    }
    return real_waitpid(pid, status, options);
}

int kill(pid_t pid, int sig) {
    find_real();
    if (pid > 0) {
        pthread_mutex_lock(&lock);
        int i = find(pid);
        pthread_mutex_unlock(&lock);
        if (i >= 0)
            return 0; /* as to a zombie: it is dead already */
    }
    return real_kill(pid, sig);
}

pid_t fork(void) {
    find_real();
    pthread_mutex_lock(&lock); /* no reap between the new pid and forgetting it */
    pid_t pid = real_fork();
    if (pid > 0) {
        int i = find(pid);
        if (i >= 0)
            forget(i);
    }
    pthread_mutex_unlock(&lock);
    if (pid == 0) /* the child has a copy of the lock, held by this thread: its own now */
        pthread_mutex_init(&lock, NULL);
    return pid;
}

static void *read_pids(void *arg) {
    FILE *pipe = arg;
    int pid;
    while (fscanf(pipe, "%d", &pid) == 1)
        reap(pid);
    fclose(pipe);
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    find_real();
    const char *fd_text = getenv("STR_OCR_REAP_FD");
    const char *preload = getenv("STR_OCR_LD_PRELOAD");
    if (preload && *preload)
        setenv("LD_PRELOAD", preload, 1);
    else
        unsetenv("LD_PRELOAD");
    unsetenv("STR_OCR_LD_PRELOAD");
    if (!fd_text)
        return;
    int fd = atoi(fd_text);
    unsetenv("STR_OCR_REAP_FD");
    FILE *pipe = fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 ? fdopen(fd, "r") : NULL;
    pthread_t thread;
    if (!pipe || pthread_create(&thread, NULL, read_pids, pipe) != 0) {
        fprintf(stderr, "reap_stubs: cannot read pids from fd %s: dead stubs stay zombies\n", fd_text);
        return;
    }
    pthread_detach(thread);
}
