#ifndef GROUPSYNC_BATCHED_LOG_VFS_H
#define GROUPSYNC_BATCHED_LOG_VFS_H

/// Registers (once per process) the SQLite VFS "groupsync-batched-log" over the default VFS and returns its
/// name for `sqlite3_open_v2`; NULL if it could not be registered (the caller then opens with the default).
///
/// It changes one thing: the frames a transaction appends to the write-ahead log reach the file in one
/// write, when the commit frame is complete, instead of two writes per page. Everything on disk — the
/// database, the log, the shared-memory index, the locks — is exactly what the default VFS makes, so other
/// processes and tools (the `sqlite3` shell) open the same files with the default VFS at the same time.
const char *groupsync_batched_log_vfs(void);

#endif
