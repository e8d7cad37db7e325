#define _GNU_SOURCE
#include "CDocumentSystem.h"

#include <errno.h>
#include <fcntl.h>

int cds_start_writeback(int fd) {
#ifdef SYNC_FILE_RANGE_WRITE
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
    errno = ENOSYS;
    return -1;
#endif
}
