#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

// Whole-buffer raw deflate (RFC 1951: no zlib header, no checksum; TLS already guarantees integrity), so
// the Swift side hands over two buffers and never touches a z_stream. Both functions are pure computation.

// Deflates `count` bytes of `input` into `output`. Returns the compressed size, or 0 when the result would
// not fit in `capacity` bytes (compressing does not pay) or zlib cannot start. `window_bits` is 9…15: a
// window no larger than the input costs less memory and decodes the same with any inflater.
static inline size_t gs_deflate_raw(const uint8_t *input, size_t count, uint8_t *output, size_t capacity,
                                    int level, int window_bits) {
    if (count > UINT32_MAX || capacity > UINT32_MAX) return 0;
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (deflateInit2(&stream, level, Z_DEFLATED, -window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)count;
    stream.next_out = output;
    stream.avail_out = (uInt)capacity;
    int status = deflate(&stream, Z_FINISH);
    size_t produced = capacity - stream.avail_out;
    deflateEnd(&stream);
    return status == Z_STREAM_END ? produced : 0;
}

// What `gs_inflate_raw` found.
enum {
    GS_INFLATE_OK = 0,            // exactly `count` bytes, and the stream ended at the input's last byte
    GS_INFLATE_CORRUPT = 1,       // not a valid deflate stream
    GS_INFLATE_TOO_LONG = 2,      // it would produce more than `count` bytes (a bomb, or a lying length)
    GS_INFLATE_TRUNCATED = 3,     // the input ends before the stream does
    GS_INFLATE_TRAILING = 4,      // bytes follow the end of the stream
    GS_INFLATE_TOO_SHORT = 5,     // the stream ended before `count` bytes
    GS_INFLATE_NO_MEMORY = 6,     // zlib could not allocate its state (about 7 KiB plus a 32 KiB window)
};

// Inflates the raw deflate stream in `input` into exactly `count` bytes at `output`. Never writes beyond
// `count` bytes and never allocates more than zlib's fixed state, whatever the input claims.
static inline int gs_inflate_raw(const uint8_t *input, size_t input_count, uint8_t *output, size_t count) {
    if (input_count > UINT32_MAX || count > UINT32_MAX) return GS_INFLATE_TOO_LONG;
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, -15) != Z_OK) return GS_INFLATE_NO_MEMORY;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)input_count;
    stream.next_out = output;
    stream.avail_out = (uInt)count;
    int status = inflate(&stream, Z_FINISH);
    int result;
    switch (status) {
    case Z_STREAM_END:
        result = stream.avail_in != 0 ? GS_INFLATE_TRAILING : stream.avail_out != 0 ? GS_INFLATE_TOO_SHORT : GS_INFLATE_OK;
        break;
    case Z_DATA_ERROR: result = GS_INFLATE_CORRUPT; break;
    case Z_MEM_ERROR: result = GS_INFLATE_NO_MEMORY; break;
    default:
        // Z_BUF_ERROR (or Z_OK): no progress is possible. With the output full there is more to come than
        // was declared; otherwise the input ran out first.
        result = stream.avail_out == 0 ? GS_INFLATE_TOO_LONG : GS_INFLATE_TRUNCATED;
        break;
    }
    inflateEnd(&stream);
    return result;
}
