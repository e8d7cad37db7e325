#define _GNU_SOURCE
#include "CDocumentSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <spawn.h>
#include <unistd.h>
#if __has_include(<malloc.h>)
#include <limits.h>
#include <malloc.h>
#endif
#include <linux/fs.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

int cds_open_folder_without_links(const char *path) {
#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
    struct open_how how = {0};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cds_openat2_beneath(int dirfd, const char *path, int flags, unsigned int mode) {
#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
    struct open_how how = {0};
    how.flags = (unsigned long long)flags;
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    for (int attempt = 0;; attempt++) {
        int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN || attempt == 8) {
            return fd;
        }
    }
#else
    errno = ENOSYS;
    return -1;
#endif
}

int cds_syncfs(int fd) { return syncfs(fd); }

int cds_renameat2(int olddirfd, const char *oldpath, int newdirfd,
                  const char *newpath, unsigned int flags) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}

ssize_t cds_flistxattr(int fd, char *list, size_t size) {
    return flistxattr(fd, list, size);
}

ssize_t cds_fgetxattr(int fd, const char *name, void *value, size_t size) {
    return fgetxattr(fd, name, value, size);
}

int cds_fsetxattr(int fd, const char *name, const void *value, size_t size,
                  int flags) {
    return fsetxattr(fd, name, value, size, flags);
}

int cds_fremovexattr(int fd, const char *name) {
    return fremovexattr(fd, name);
}

ssize_t cds_lgetxattr(const char *path, const char *name, void *value,
                      size_t size) {
    return lgetxattr(path, name, value, size);
}

int cds_lsetxattr(const char *path, const char *name, const void *value,
                  size_t size, int flags) {
    return lsetxattr(path, name, value, size, flags);
}

ssize_t cds_llistxattr(const char *path, char *list, size_t size) {
    return llistxattr(path, list, size);
}

int cds_fcntl_lock(int fd, int command, short type, off_t start, off_t length) {
    struct flock lock = {0};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = start;
    lock.l_len = length;
    lock.l_pid = 0;
    return fcntl(fd, command, &lock);
}

int cds_fcntl_getlk(int fd, int command, short type, pid_t *holder, int *conflicting) {
    struct flock lock = {0};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;
    lock.l_pid = 0;
    int result = fcntl(fd, command, &lock);
    if (result == 0) {
        *conflicting = lock.l_type != F_UNLCK;
        *holder = *conflicting ? lock.l_pid : 0;
    }
    return result;
}

int cds_fcntl_int(int fd, int command, int argument) {
    return fcntl(fd, command, argument);
}

int cds_ficlone(int destination_fd, int source_fd) {
#ifdef FICLONE
    return ioctl(destination_fd, FICLONE, source_fd);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int cds_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int cds_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred credentials = {0};
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

#include <signal.h>
#include <string.h>

static volatile int cds_signal_pipe_fd = -1;

static void cds_signal_to_pipe(int signal_number) {
    int saved = errno;
    unsigned char byte = (unsigned char)signal_number;
    if (cds_signal_pipe_fd >= 0) {
        (void)!write(cds_signal_pipe_fd, &byte, 1);
    }
    errno = saved;
}

int cds_install_signal_pipe(int signal_number, int pipe_fd) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    cds_signal_pipe_fd = pipe_fd;
    action.sa_handler = cds_signal_to_pipe;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signal_number, &action, NULL);
}

int cds_return_large_blocks(size_t bytes) {
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    if (bytes > INT_MAX) return 0;
    return mallopt(M_MMAP_THRESHOLD, (int)bytes) && mallopt(M_TRIM_THRESHOLD, (int)bytes);
#else
    (void)bytes;
    return 0;
#endif
}

size_t cds_malloc_mapped_bytes(void) { return mallinfo2().hblkhd; }

int cds_return_free_pages(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

int cds_limit_malloc_arenas(int count) {
#if defined(M_ARENA_MAX)
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}

int cds_spawn_actions_close_from(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, from);
}
