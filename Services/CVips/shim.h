#ifndef RECIPEVAULT_CVIPS_SHIM_H
#define RECIPEVAULT_CVIPS_SHIM_H

// libvips for the worker's photo intake. libvips' calls take their options as
// NULL-terminated varargs, which Swift cannot call: each call the intake makes is
// wrapped here with fixed arguments.
#include <vips/vips.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>

/// The formats the intake decodes; each is read by its own loader, never by content sniffing.
typedef enum {
    RV_JPEG = 0, RV_PNG = 1, RV_WEBP = 2, RV_HEIF = 3
} rv_format;

/// libvips' own warnings ("ignoring nclx profile", "premature end of JPEG file") are not
/// the worker's to print: what matters reaches the caller as an error.
static void rv_quiet(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/// The photo intake's helper process ends when the worker that started it does (prctl is varargs too).
static inline int rv_end_with_parent(void) {
    return prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/// Starts libvips once per process: no operation cache (each photo is seen once), the
/// given number of threads per pipeline, and no loader libvips marks as untrusted.
static inline int rv_start(int threads) {
    if (VIPS_INIT("recipe-worker") != 0) return -1;
    g_log_set_handler("VIPS", (GLogLevelFlags)(G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO), rv_quiet, NULL);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(threads);
    vips_block_untrusted_set(TRUE);
    return 0;
}

/// Reads only the header (size, bands, metadata) with the loader for `format`; no pixels are decoded.
static inline VipsImage *rv_header(const void *bytes, size_t length, rv_format format) {
    VipsImage *image = NULL;
    int status = -1;
    void *buffer = (void *)bytes;
    switch (format) {
    case RV_JPEG: status = vips_jpegload_buffer(buffer, length, &image, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL); break;
    case RV_PNG: status = vips_pngload_buffer(buffer, length, &image, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL); break;
    case RV_WEBP: status = vips_webpload_buffer(buffer, length, &image, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL); break;
    case RV_HEIF: status = vips_heifload_buffer(buffer, length, &image, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL); break;
    }
    return status == 0 ? image : NULL;
}

/// Decodes every pixel of `image` (a header from rv_header), so a truncated or corrupt
/// file fails here; 0 when all of it decoded.
static inline int rv_decode_all(VipsImage *image) {
    double average = 0;
    return vips_avg(image, &average, NULL);
}

/// Decodes `loaded` (from rv_header), turns it upright by its orientation tag and scales it
/// down (never up) so neither side passes `long_side`; the result is held in memory so it can be
/// encoded several times. A truncated or damaged file fails here (the loader fails on truncation).
static inline VipsImage *rv_fit(VipsImage *loaded, int long_side) {
    VipsImage *lazy = NULL;
    if (vips_thumbnail_image(loaded, &lazy, long_side, "height", long_side, "size", VIPS_SIZE_DOWN, NULL) != 0) return NULL;
    VipsImage *held = vips_image_copy_memory(lazy);
    g_object_unref(lazy);
    return held;
}

/// `image` scaled by `factor` (< 1), held in memory.
static inline VipsImage *rv_scale(VipsImage *image, double factor) {
    VipsImage *lazy = NULL;
    if (vips_resize(image, &lazy, factor, NULL) != 0) return NULL;
    VipsImage *held = vips_image_copy_memory(lazy);
    g_object_unref(lazy);
    return held;
}

static inline int rv_save_jpeg(VipsImage *image, int quality, int strip, void **out, size_t *length) {
    return vips_jpegsave_buffer(image, out, length, "Q", quality, "strip", strip, "optimize_coding", TRUE, NULL);
}

static inline int rv_save_png(VipsImage *image, int strip, void **out, size_t *length) {
    return vips_pngsave_buffer(image, out, length, "compression", 6, "strip", strip, NULL);
}

static inline int rv_save_webp(VipsImage *image, int quality, int strip, void **out, size_t *length) {
    return vips_webpsave_buffer(image, out, length, "Q", quality, "strip", strip, NULL);
}

/// Whether the header has a metadata field called `name`.
static inline int rv_has_field(VipsImage *image, const char *name) {
    return vips_image_get_typeof(image, name) != 0;
}

/// Whether the header has a metadata field whose name starts with `prefix` ("exif-ifd3-": the GPS fields).
static inline int rv_has_field_prefix(VipsImage *image, const char *prefix) {
    gchar **fields = vips_image_get_fields(image);
    int found = 0;
    size_t length = strlen(prefix);
    for (gchar **field = fields; field && *field && !found; field++) found = strncmp(*field, prefix, length) == 0;
    g_strfreev(fields);
    return found;
}

/// The text of libvips' errors since the last call, which it then forgets.
static inline char *rv_take_error(void) {
    char *text = g_strdup(vips_error_buffer());
    vips_error_clear();
    return text;
}

// ---- Making and reading back images: for the tests and the benchmark, not the intake ----

/// A photo-like picture: a colour gradient with grain of `grain` (0–100), a red block in
/// the top-left quarter (so turning can be seen) and, when `alpha`, a transparent right half.
/// A black lossless WebP of `width` × `height`: a few KB that take width × height × 3 bytes to decode.
static inline int rv_make_blank_webp(int width, int height, void **out, size_t *length) {
    VipsImage *black = NULL;
    if (vips_black(&black, width, height, "bands", 3, NULL) != 0) return -1;
    int status = vips_webpsave_buffer(black, out, length, "lossless", TRUE, NULL);
    g_object_unref(black);
    return status;
}

static inline VipsImage *rv_make_picture(int width, int height, double grain, int alpha) {
    VipsImage *xy = NULL, *noise = NULL, *mixed = NULL, *rgb = NULL, *cast = NULL, *out = NULL;
    VipsImage *base[3] = {NULL, NULL, NULL};
    if (vips_xyz(&xy, width, height, NULL) != 0) return NULL;
    VipsImage *bands[2] = {NULL, NULL};
    vips_extract_band(xy, &bands[0], 0, NULL);
    vips_extract_band(xy, &bands[1], 1, NULL);
    vips_linear1(bands[0], &base[0], 255.0 / width, 0, NULL);
    vips_linear1(bands[1], &base[1], 255.0 / height, 0, NULL);
    vips_linear1(bands[0], &base[2], -128.0 / width, 200, NULL);
    vips_bandjoin(base, &rgb, 3, NULL);
    vips_gaussnoise(&noise, width, height, "sigma", grain, "mean", 0.0, NULL);
    vips_add(rgb, noise, &mixed, NULL);
    vips_cast(mixed, &cast, VIPS_FORMAT_UCHAR, NULL);
    double red[3] = {230, 20, 20};
    vips_draw_rect(cast, red, 3, 0, 0, width / 4, height / 4, "fill", TRUE, NULL);
    if (alpha) {
        VipsImage *mask = NULL, *opaque = NULL;
        vips_black(&opaque, width, height, NULL);
        vips_linear1(opaque, &mask, 1, 255, NULL);
        VipsImage *cut = NULL;
        vips_cast(mask, &cut, VIPS_FORMAT_UCHAR, NULL);
        double clear[1] = {0};
        vips_draw_rect(cut, clear, 1, width / 2, 0, width - width / 2, height, "fill", TRUE, NULL);
        vips_bandjoin2(cast, cut, &out, NULL);
        g_object_unref(mask); g_object_unref(opaque); g_object_unref(cut);
    } else {
        out = vips_image_copy_memory(cast);
    }
    g_object_unref(xy); g_object_unref(bands[0]); g_object_unref(bands[1]);
    for (int i = 0; i < 3; i++) g_object_unref(base[i]);
    g_object_unref(rgb); g_object_unref(noise); g_object_unref(mixed); g_object_unref(cast);
    return out;
}

static inline int rv_save_heif(VipsImage *image, int quality, int av1, void **out, size_t *length) {
    return vips_heifsave_buffer(image, out, length, "Q", quality, "effort", 0,
                                "compression", av1 ? VIPS_FOREIGN_HEIF_COMPRESSION_AV1 : VIPS_FOREIGN_HEIF_COMPRESSION_HEVC, NULL);
}

/// Any image libvips reads, by its content (reading back what the intake wrote).
static inline VipsImage *rv_read(const void *bytes, size_t length) {
    return vips_image_new_from_buffer((void *)bytes, length, "", NULL);
}

/// The values of the pixel at x, y (up to four bands); 0 when it was read.
static inline int rv_pixel(VipsImage *image, int x, int y, double *values, int capacity) {
    double *vector = NULL;
    int count = 0;
    if (vips_getpoint(image, &vector, &count, x, y, NULL) != 0) return -1;
    for (int i = 0; i < count && i < capacity; i++) values[i] = vector[i];
    g_free(vector);
    return 0;
}

#endif
