#include <zlib.h>

// zlib's init macros pass ZLIB_VERSION and the stream's size; Swift cannot call macros.
static inline int rv_inflate_init(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
static inline int rv_deflate_init(z_stream *stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
