#define _GNU_SOURCE
#include <unistd.h>
#include "file_sync.h"

int recipevault_syncfs(int fd) {
    return syncfs(fd);
}
