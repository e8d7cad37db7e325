#ifndef C_DOCUMENT_SYSTEM_H
#define C_DOCUMENT_SYSTEM_H

#include <stddef.h>
#include <sys/types.h>

/// Open file description lock commands. Glibc hides them behind _GNU_SOURCE,
/// which Swift's Glibc module does not define.
#define CDS_F_OFD_GETLK 36
#define CDS_F_OFD_SETLK 37
#define CDS_F_OFD_SETLKW 38

/// open(2) flag for a descriptor that only names a file (Glibc hides it behind _GNU_SOURCE).
#define CDS_O_PATH 010000000

/// posix_spawn flag that makes the child a session leader (Glibc hides it behind _GNU_SOURCE).
#define CDS_POSIX_SPAWN_SETSID 0x80

/// posix_spawn_file_actions_addclosefrom_np(3): the child closes every descriptor from
/// `from` up (Glibc 2.34 and later, hidden behind _GNU_SOURCE). `actions` is a
/// posix_spawn_file_actions_t.
int cds_spawn_actions_close_from(void *actions, int from);

#define CDS_RENAME_NOREPLACE (1 << 0)
#define CDS_RENAME_EXCHANGE (1 << 1)

/// openat2(2) of the folder at absolute `path` with O_PATH, refusing to follow any symbolic
/// link on the way (RESOLVE_NO_SYMLINKS): success means the path names the folder exactly
/// as the kernel would spell it. Returns -1 with errno ELOOP for a link, or ENOSYS where
/// the kernel (before 5.6) or a seccomp filter lacks openat2.
int cds_open_folder_without_links(const char *path);

/// openat2(2) of `path` relative to the folder open as `dirfd`, resolved beneath it and
/// nowhere else: RESOLVE_BENEATH (no absolute path, no ".." above `dirfd`) and
/// RESOLVE_NO_SYMLINKS (no symbolic link followed at any step, the last one included: ELOOP).
/// `mode` is used only with O_CREAT. Returns -1 with errno ENOSYS where the kernel (before
/// 5.6) or a seccomp filter lacks openat2; EAGAIN (a rename raced the lookup) is retried.
int cds_openat2_beneath(int dirfd, const char *path, int flags, unsigned int mode);

/// renameat2(2); returns -1 with errno ENOSYS or EINVAL where the kernel or
/// file system lacks it.
int cds_renameat2(int olddirfd, const char *oldpath, int newdirfd,
                  const char *newpath, unsigned int flags);

/// syncfs(2) (Glibc hides it behind _GNU_SOURCE).
int cds_syncfs(int fd);

ssize_t cds_flistxattr(int fd, char *list, size_t size);
ssize_t cds_fgetxattr(int fd, const char *name, void *value, size_t size);
int cds_fsetxattr(int fd, const char *name, const void *value, size_t size,
                  int flags);
int cds_fremovexattr(int fd, const char *name);
ssize_t cds_lgetxattr(const char *path, const char *name, void *value,
                      size_t size);
int cds_lsetxattr(const char *path, const char *name, const void *value,
                  size_t size, int flags);
ssize_t cds_llistxattr(const char *path, char *list, size_t size);

/// fcntl(2) with a struct flock argument, for OFD and POSIX record locks.
int cds_fcntl_lock(int fd, int command, short type, off_t start, off_t length);

/// fcntl(2) with F_GETLK or F_OFD_GETLK: whether a lock of `type` over the whole file would
/// conflict with another's. Sets *holder to the conflicting lock's process (-1 for an open
/// file description lock, 0 where the system does not say), or 0 with *conflicting 0 when
/// nothing conflicts.
int cds_fcntl_getlk(int fd, int command, short type, pid_t *holder, int *conflicting);

/// fcntl(2) with an int argument or none.
int cds_fcntl_int(int fd, int command, int argument);

/// ioctl(FICLONE): a copy-on-write clone where the file system supports it.
int cds_ficlone(int destination_fd, int source_fd);

/// accept4(2); Glibc hides it behind _GNU_SOURCE.
int cds_accept4(int fd, int flags);

/// The process and user at the other end of a Unix socket (getsockopt SO_PEERCRED);
/// struct ucred is hidden behind _GNU_SOURCE.
int cds_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// Installs a handler for `signal_number` that writes the signal's number as one byte to
/// `pipe_fd`. A handler, unlike SIG_IGN, is reset to the default in programs the process
/// executes, so a child editor can still be interrupted or terminated.
int cds_install_signal_pipe(int signal_number, int pipe_fd);

/// sync_file_range(2) with SYNC_FILE_RANGE_WRITE over the whole file: starts writing its
/// dirty pages back without waiting, so that the fsync(2) that follows has less to wait for.
/// Not a durability guarantee by itself. Returns -1 with errno ENOSYS where unsupported.
int cds_start_writeback(int fd);

/// mallopt(M_ARENA_MAX, count): at most `count` malloc arenas for the process's threads
/// (glibc gives each thread one of its own, up to eight a core, each keeping what it freed).
/// Returns 1 on success, 0 where the C library does not have it.
int cds_limit_malloc_arenas(int count);

/// mallopt(M_MMAP_THRESHOLD, bytes) and mallopt(M_TRIM_THRESHOLD, bytes): every block of
/// `bytes` or more is mapped on its own and given back to the system when freed, and free
/// memory at the heap's top past `bytes` is too. glibc otherwise raises the threshold to the
/// size of each mapped block freed (up to 32 MiB), after which a program's large tables (a
/// pass's plan, its scan) come from the heap and stay in its resident memory once freed.
/// Returns 1 on success, 0 where the C library does not have it.
int cds_return_large_blocks(size_t bytes);

/// mallinfo2().hblkhd: the bytes malloc has mapped on their own (the large blocks above).
size_t cds_malloc_mapped_bytes(void);

/// malloc_trim(0): gives the system back every whole free page of the heap, in its middle
/// too (the trim threshold only frees the top), so that tables freed between others that
/// stay do not stay resident. Returns 1 if memory was given back, 0 otherwise (or where the
/// C library does not have it).
int cds_return_free_pages(void);

#endif
