#ifndef RECIPEVAULT_FILE_SYNC_H
#define RECIPEVAULT_FILE_SYNC_H

/// Flushes every write to the file system holding `fd` and waits for it (Linux `syncfs`, which
/// Swift's Glibc module leaves out as a GNU extension). Returns 0, or -1 with errno set.
int recipevault_syncfs(int fd);

#endif
