// Both functions are GNU extensions that Swift's Glibc module does not declare (it is not built with
// _GNU_SOURCE); this file only forwards to them.
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include "ChildSpawn.h"

int child_spawn_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int child_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
