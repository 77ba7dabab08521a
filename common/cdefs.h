/*
 * cdefs.h - compiler attributes and the API version shared by detmd and
 * detm-mcp.
 *
 * Part of common/, the contract both programs build on: it includes only
 * the C library and json-c, never daemon/ or mcp-proxy/ headers.
 */
#ifndef DETM_CDEFS_H
#define DETM_CDEFS_H

#define DETM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define DETM_NODISCARD __attribute__((warn_unused_result))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The HTTP API's version: detmd reports it (GET /api/version), detm-mcp
 * checks it at start. Bump on an incompatible change of routes or shapes. */
#define DETM_API_VERSION 1

#endif
