/*
 * mcp_skill.h - the MCP skills extension (SEP-2640,
 * "io.modelcontextprotocol/skills") as detm serves it: one skill, detm's
 * usage guide, at skill://detm/SKILL.md. Its bytes are
 * integrations/openclaw/SKILL.md compiled in at build time (the Makefile
 * embeds it with its sha256 in build/gen/skill_md.c), so detm-mcp and
 * detmd's /mcp serve the same file the OpenClaw skill is, and nothing is
 * read at run time. The file's instructions paragraph is the MCP
 * `instructions` (tools/skill-sync.py keeps them equal; the mcp suite
 * checks it).
 *
 * The extension reads skill files through resources/read, so detm also
 * serves the resources surface for this one file: resources/list lists
 * it, resources/templates/list is empty, resources/read returns it.
 *
 * Does not: speak JSON-RPC (common/mcp.c does), page (one skill, one
 * file: no cursor is ever handed out), subscribe.
 * Pure and thread-safe: every call builds a new object.
 */
#ifndef DETM_MCP_SKILL_H
#define DETM_MCP_SKILL_H

#include <json-c/json.h>
#include <stddef.h>

#define MCP_SKILL_EXT  "io.modelcontextprotocol/skills"
#define MCP_SKILL_URI  "skill://detm/SKILL.md"

/* Set by the build (build/gen/skill_md.c); the generator of tools/list
 * defines them empty. */
extern const unsigned char mcp_skill_md[];
extern const unsigned long mcp_skill_md_len;
extern const char mcp_skill_md_digest[];        /* "sha256:<64 hex>" */

/* The skill entry of skills/list and skills/get: {uri, frontmatter,
 * resources: [{uri, digest, size}]}; frontmatter is SKILL.md's YAML
 * header as an object (its flat "key: value" lines). New object. */
struct json_object *mcp_skill_entry(void);

/* The Resource of resources/list: {uri, name, description, mimeType,
 * size}. New object. */
struct json_object *mcp_skill_resource(void);

/* resources/read's "contents" array for uri, or NULL when uri is not a
 * file detm serves. New object. */
struct json_object *mcp_skill_contents(const char *uri);

#endif
