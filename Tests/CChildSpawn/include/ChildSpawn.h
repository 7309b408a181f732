#ifndef CHILD_SPAWN_H
#define CHILD_SPAWN_H

#include <spawn.h>

/// A pipe whose two ends are close-on-exec from the moment they exist (pipe2 with O_CLOEXEC), so no child
/// spawned by another thread in the meantime inherits them. Returns 0, or -1 with errno set.
int child_spawn_pipe(int fds[2]);

/// Adds "close every descriptor from `lowest` up" to a spawn's file actions (glibc 2.34+), so the child
/// inherits nothing of the test process beyond the descriptors it is given. Returns 0 or an error number.
int child_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
