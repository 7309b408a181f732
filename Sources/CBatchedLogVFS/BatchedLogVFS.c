// A VFS shim that gathers a transaction's write-ahead-log frames into one write.
//
// Why: SQLite appends each WAL frame as two `pwrite`s (the 24-byte frame header, then the page). A commit of
// a few keys writes a dozen pages, so about 26 system calls, each taking the inode lock and running the
// filesystem's write path; on this project's machines that was a fifth of the daemon's CPU per group commit
// (Benchmarks/analysis.md, workload 4). Held in memory and written once, they cost one call.
//
// Why it is safe: a frame is only *visible* to readers once the writer publishes the new end of the log in
// the shared-memory index, and SQLite publishes it only after the last frame's page was written (and, with a
// synchronous commit, after syncing the log). This shim writes what it holds
//   * when the page of a commit frame (a frame header whose "database size" field is non-zero) is written:
//     the commit's last write, so a failure reaches SQLite as that write's error and the commit fails;
//   * before any other operation on the log: read, sync, size, truncate, lock, control, close;
//   * before a shared-memory barrier, shared-memory lock, lock or sync on the log's database file, which is
//     what publishing the index takes (a safety net: nothing should be held by then);
//   * when the held bytes would not be contiguous or would exceed `kHeldCapacity`.
// Only appends are held. A write below what this handle already wrote in the same write transaction, which
// begins when the connection takes the log's write lock (SQLite's `walRewriteChecksums` rewriting the
// headers of frames it spilled, ending with the commit frame's, which no page write follows), is written at
// once, after what is held, so that its failure is that write's error and fails the commit.
// Held until the barrier, its failure could only mark the log failed after SQLite had published a commit
// whose last header on disk was wrong, and a later recovery would stop there, dropping every commit after
// it, other processes' acknowledged ones included.
// A process that dies while holding frames leaves a log without them and an index that never named them:
// the same state as dying in the middle of SQLite's own writes.
#include "BatchedLogVFS.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

enum {
    kFrameHeaderSize = 24,
    /// About 23 frames of 4 KiB pages: a group commit of a dozen keys in one write, larger transactions in
    /// chunks. It must stay below 128 KiB: the default Unix VFS passes at most 0x1ffff bytes to one `pwrite`
    /// (SQLite never writes more than a page at once) and reports the rest of a longer write as a full disk.
    kHeldCapacity = 96 * 1024,
};

typedef struct BatchedFile BatchedFile;
struct BatchedFile {
    sqlite3_file base;      // base.pMethods is `batchedMethods` once open
    sqlite3_file *real;     // the default VFS's file, stored right after this struct
    int isLog;              // opened with SQLITE_OPEN_WAL: the only kind whose writes are held
    BatchedFile *log;       // on a database file: its write-ahead log, while both are open
    BatchedFile *database;  // on a log: the database file it belongs to, while both are open
    unsigned char *held;    // bytes written but not yet passed on, contiguous from heldOffset
    int heldLength;
    sqlite3_int64 heldOffset;
    int commitHeaderHeld;   // the last write was a commit frame's header: the next one completes the commit
    sqlite3_int64 writtenEnd;  // the end of what this handle wrote (held or not) in the current write transaction
    int failed;             // a write that could not report its error failed: every later call reports it
};

static sqlite3_vfs *realVFS;
static sqlite3_vfs batchedVFS;
static const char *registeredName;
static pthread_once_t registration = PTHREAD_ONCE_INIT;

static int writeHeld(BatchedFile *file) {
    if (file->heldLength == 0) return SQLITE_OK;
    int rc = file->real->pMethods->xWrite(file->real, file->held, file->heldLength, file->heldOffset);
    // Dropped either way: after a failed write SQLite rolls the transaction back and rewrites those frames.
    file->heldLength = 0;
    file->commitHeaderHeld = 0;
    return rc;
}

/// Before an operation that reads, sizes, truncates, syncs or controls `file`: passes on what its log holds
/// (its own, for a log), so the operation sees the log as SQLite wrote it. A log that failed refuses.
static int passOnHeld(BatchedFile *file) {
    BatchedFile *log = file->isLog ? file : file->log;
    if (log == NULL) return SQLITE_OK;
    int rc = writeHeld(log);
    if (rc != SQLITE_OK) return rc;
    return file->isLog ? log->failed : SQLITE_OK;
}

/// Before a lock, an unlock, or the barrier that publishes the index: they must happen whatever becomes of
/// the held frames (an unlock that failed would stall every other process), so a failure to write them
/// makes the log refuse every later operation instead: its sync fails, and no write that depended on them
/// is ever acknowledged.
static void passOnHeldBeforeOrdering(BatchedFile *file) {
    BatchedFile *log = file->isLog ? file : file->log;
    if (log == NULL) return;
    int rc = writeHeld(log);
    if (rc != SQLITE_OK) log->failed = rc;
}

static int batchedWrite(sqlite3_file *base, const void *bytes, int amount, sqlite3_int64 offset) {
    BatchedFile *file = (BatchedFile *)base;
    if (!file->isLog) {
        int rc = passOnHeld(file);
        return rc != SQLITE_OK ? rc : file->real->pMethods->xWrite(file->real, bytes, amount, offset);
    }
    if (file->failed) return file->failed;
    // The log's header, at offset 0, starts it afresh: everything after it is appended again.
    if (offset == 0) file->writtenEnd = 0;
    if (offset < file->writtenEnd) {
        // A rewrite: written now, after what is held, so its failure reaches SQLite from this call.
        int rc = writeHeld(file);
        if (rc != SQLITE_OK) return rc;
        file->commitHeaderHeld = 0;
        rc = file->real->pMethods->xWrite(file->real, bytes, amount, offset);
        if (rc == SQLITE_OK && offset + amount > file->writtenEnd) file->writtenEnd = offset + amount;
        return rc;
    }
    file->writtenEnd = offset + amount;
    int completesCommit = file->commitHeaderHeld;
    if (file->heldLength > 0
        && (offset != file->heldOffset + file->heldLength || file->heldLength + amount > kHeldCapacity)) {
        int rc = writeHeld(file);
        if (rc != SQLITE_OK) return rc;
    }
    if (file->held == NULL) file->held = malloc(kHeldCapacity);
    if (file->held == NULL || amount > kHeldCapacity) {
        file->commitHeaderHeld = 0;
        return file->real->pMethods->xWrite(file->real, bytes, amount, offset);  // not held: written now
    }
    if (file->heldLength == 0) file->heldOffset = offset;
    memcpy(file->held + file->heldLength, bytes, (size_t)amount);
    file->heldLength += amount;
    const unsigned char *header = bytes;
    file->commitHeaderHeld = amount == kFrameHeaderSize && (header[4] | header[5] | header[6] | header[7]) != 0;
    return completesCommit ? writeHeld(file) : SQLITE_OK;
}

#define REAL(file) ((BatchedFile *)(file))->real
#define METHODS(file) REAL(file)->pMethods

static int batchedClose(sqlite3_file *base) {
    BatchedFile *file = (BatchedFile *)base;
    int held = file->isLog ? passOnHeld(file) : SQLITE_OK;
    if (!file->isLog) passOnHeldBeforeOrdering(file);
    if (file->database != NULL) file->database->log = NULL;
    if (file->log != NULL) file->log->database = NULL;
    int rc = METHODS(base)->xClose(REAL(base));
    free(file->held);
    file->held = NULL;
    return held != SQLITE_OK ? held : rc;
}

static int batchedRead(sqlite3_file *base, void *bytes, int amount, sqlite3_int64 offset) {
    int rc = passOnHeld((BatchedFile *)base);
    return rc != SQLITE_OK ? rc : METHODS(base)->xRead(REAL(base), bytes, amount, offset);
}

static int batchedTruncate(sqlite3_file *base, sqlite3_int64 size) {
    BatchedFile *file = (BatchedFile *)base;
    int rc = passOnHeld(file);
    if (rc == SQLITE_OK && file->writtenEnd > size) file->writtenEnd = size;
    return rc != SQLITE_OK ? rc : METHODS(base)->xTruncate(REAL(base), size);
}

static int batchedSync(sqlite3_file *base, int flags) {
    int rc = passOnHeld((BatchedFile *)base);
    return rc != SQLITE_OK ? rc : METHODS(base)->xSync(REAL(base), flags);
}

static int batchedFileSize(sqlite3_file *base, sqlite3_int64 *size) {
    int rc = passOnHeld((BatchedFile *)base);
    return rc != SQLITE_OK ? rc : METHODS(base)->xFileSize(REAL(base), size);
}

static int batchedLock(sqlite3_file *base, int level) {
    passOnHeldBeforeOrdering((BatchedFile *)base);
    return METHODS(base)->xLock(REAL(base), level);
}

static int batchedUnlock(sqlite3_file *base, int level) {
    passOnHeldBeforeOrdering((BatchedFile *)base);
    return METHODS(base)->xUnlock(REAL(base), level);
}

static int batchedCheckReservedLock(sqlite3_file *base, int *reserved) {
    return METHODS(base)->xCheckReservedLock(REAL(base), reserved);
}

static int batchedFileControl(sqlite3_file *base, int op, void *argument) {
    int rc = passOnHeld((BatchedFile *)base);
    if (rc != SQLITE_OK) return rc;
    rc = METHODS(base)->xFileControl(REAL(base), op, argument);
    if (op == SQLITE_FCNTL_VFSNAME && rc == SQLITE_OK) {
        // Shims name themselves before the VFS they wrap ("groupsync-batched-log/unix").
        char **name = argument;
        *name = sqlite3_mprintf("%s/%z", batchedVFS.zName, *name);
    }
    return rc;
}

static int batchedSectorSize(sqlite3_file *base) {
    return METHODS(base)->xSectorSize(REAL(base));
}

static int batchedDeviceCharacteristics(sqlite3_file *base) {
    return METHODS(base)->xDeviceCharacteristics(REAL(base));
}

static int batchedShmMap(sqlite3_file *base, int region, int size, int extend, void volatile **address) {
    return METHODS(base)->xShmMap(REAL(base), region, size, extend, address);
}

/// SQLite's `WAL_WRITE_LOCK`: the first lock of the shared-memory index, held exclusively for a whole write
/// transaction.
enum { kLogWriteLock = 0 };

static int batchedShmLock(sqlite3_file *base, int offset, int count, int flags) {
    BatchedFile *file = (BatchedFile *)base;
    passOnHeldBeforeOrdering(file);
    int rc = METHODS(base)->xShmLock(REAL(base), offset, count, flags);
    // A write transaction begins: what its log handle wrote before is no guide to what this one rewrites.
    // Another connection may have restarted the log since, and this handle's appends then start below its
    // old end; judged against it, every frame would count as a rewrite and go out at once, unbatched.
    if (rc == SQLITE_OK && offset == kLogWriteLock && count == 1 && flags == (SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE)
        && file->log != NULL) {
        file->log->writtenEnd = 0;
    }
    return rc;
}

static void batchedShmBarrier(sqlite3_file *base) {
    // The writer calls this between the two copies of the index header it publishes: what it names must
    // be in the file first.
    passOnHeldBeforeOrdering((BatchedFile *)base);
    METHODS(base)->xShmBarrier(REAL(base));
}

static int batchedShmUnmap(sqlite3_file *base, int deleteFlag) {
    return METHODS(base)->xShmUnmap(REAL(base), deleteFlag);
}

static int batchedFetch(sqlite3_file *base, sqlite3_int64 offset, int amount, void **pointer) {
    return METHODS(base)->xFetch(REAL(base), offset, amount, pointer);
}

static int batchedUnfetch(sqlite3_file *base, sqlite3_int64 offset, void *pointer) {
    return METHODS(base)->xUnfetch(REAL(base), offset, pointer);
}

static const sqlite3_io_methods batchedMethods = {
    3,
    batchedClose, batchedRead, batchedWrite, batchedTruncate, batchedSync, batchedFileSize,
    batchedLock, batchedUnlock, batchedCheckReservedLock, batchedFileControl, batchedSectorSize,
    batchedDeviceCharacteristics,
    batchedShmMap, batchedShmLock, batchedShmBarrier, batchedShmUnmap,
    batchedFetch, batchedUnfetch,
};

static int batchedOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *base, int flags, int *outFlags) {
    (void)vfs;
    BatchedFile *file = (BatchedFile *)base;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)(file + 1);
    int rc = realVFS->xOpen(realVFS, name, file->real, flags, outFlags);
    if (rc != SQLITE_OK) {
        if (file->real->pMethods != NULL) file->real->pMethods->xClose(file->real);
        file->base.pMethods = NULL;  // tells SQLite there is nothing to close
        return rc;
    }
    file->isLog = (flags & SQLITE_OPEN_WAL) != 0;
    if (file->isLog) {
        // SQLite opened the log's database through this VFS first; the link lets the database's barrier
        // and locks pass on what the log holds.
        BatchedFile *database = (BatchedFile *)sqlite3_database_file_object(name);
        if (database != NULL && database->base.pMethods == &batchedMethods) {
            file->database = database;
            database->log = file;
        }
    }
    file->base.pMethods = &batchedMethods;
    return SQLITE_OK;
}

// The rest of the VFS is the default one's, called with the default VFS as its own argument.
static int batchedDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    return realVFS->xDelete(realVFS, name, syncDirectory);
}
static int batchedAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return realVFS->xAccess(realVFS, name, flags, result);
}
static int batchedFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return realVFS->xFullPathname(realVFS, name, size, out);
}
static void *batchedDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return realVFS->xDlOpen(realVFS, name);
}
static void batchedDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    realVFS->xDlError(realVFS, size, message);
}
static void (*batchedDlSym(sqlite3_vfs *vfs, void *library, const char *symbol))(void) {
    (void)vfs;
    return realVFS->xDlSym(realVFS, library, symbol);
}
static void batchedDlClose(sqlite3_vfs *vfs, void *library) {
    (void)vfs;
    realVFS->xDlClose(realVFS, library);
}
static int batchedRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xRandomness(realVFS, size, out);
}
static int batchedSleep(sqlite3_vfs *vfs, int micros) {
    (void)vfs;
    return realVFS->xSleep(realVFS, micros);
}
static int batchedCurrentTime(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return realVFS->xCurrentTime(realVFS, now);
}
static int batchedGetLastError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    return realVFS->xGetLastError(realVFS, size, message);
}
static int batchedCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return realVFS->xCurrentTimeInt64(realVFS, now);
}

static void registerOnce(void) {
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    // Version 2 is what the shim forwards; the default Unix VFS has it.
    if (real == NULL || real->iVersion < 2 || real->xCurrentTimeInt64 == NULL) return;
    realVFS = real;
    batchedVFS = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(BatchedFile) + real->szOsFile,
        .mxPathname = real->mxPathname,
        .zName = "groupsync-batched-log",
        .xOpen = batchedOpen,
        .xDelete = batchedDelete,
        .xAccess = batchedAccess,
        .xFullPathname = batchedFullPathname,
        .xDlOpen = batchedDlOpen,
        .xDlError = batchedDlError,
        .xDlSym = batchedDlSym,
        .xDlClose = batchedDlClose,
        .xRandomness = batchedRandomness,
        .xSleep = batchedSleep,
        .xCurrentTime = batchedCurrentTime,
        .xGetLastError = batchedGetLastError,
        .xCurrentTimeInt64 = batchedCurrentTimeInt64,
    };
    if (sqlite3_vfs_register(&batchedVFS, 0) == SQLITE_OK) registeredName = batchedVFS.zName;
}

const char *groupsync_batched_log_vfs(void) {
    pthread_once(&registration, registerOnce);
    return registeredName;
}
