/*
 * jxkeep.h - makes a value json-c parsed say exactly what its text said.
 *
 * json-c 0.16 (Debian 12) parses integers into int64/uint64 with saturation
 * (123456789012345678901234567890 becomes 18446744073709551615), prints -0
 * as 0, cuts keys at an escaped NUL ("a\u0000b" becomes "a"), keeps the
 * last of duplicate keys, and accepts NaN, Infinity and "1." even with
 * JSON_TOKENER_STRICT. It has no tokener flag that keeps a number's text;
 * only doubles keep theirs (json_object_new_double_s). jxkeep_fix walks the
 * text and the tree json-c built from it side by side and:
 *   - refuses what is not JSON (NaN, Infinity, 1., -.5, ...);
 *   - refuses a key holding NUL, and a key given twice in one object,
 *     with DERR_INVALID whose field is the key's path as written
 *     ("input_data.a\u0000b", "metadata.x[0].k", at most 63 bytes);
 *   - replaces each integer json-c would not print back as written
 *     (beyond 64 bits, -0) by a double that prints as the original text.
 * Doubles already print as their original text (1e400, -0.0, 1.5e-320).
 */
#ifndef DETM_JXKEEP_H
#define DETM_JXKEEP_H

#include <stddef.h>

#include <json-c/json.h>

#include "derr.h"

/* text (len bytes, valid UTF-8) is what json-c parsed into *root (STRICT,
 * success, nothing but whitespace after the value). Fixes *root in place
 * (it may be replaced when it is itself a number) and returns 0, or fills
 * e and returns -1 leaving *root for the caller to free. */
int jxkeep_fix(const char *text, size_t len, json_object **root,
    struct derr *e) DETM_NODISCARD;

#endif
