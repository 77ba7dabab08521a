/*
 * mcp_skill.c - see mcp_skill.h. The frontmatter parser reads only what
 * SKILL.md's header holds: "key: value" lines of plain scalars between
 * the leading "---" lines (the conformance suite's skills scenarios parse
 * the file with a YAML parser and compare: a header this parser cannot
 * represent fails sep-2640-entry-frontmatter-identical in the mcp suite).
 */
#include "mcp_skill.h"

#include <stdint.h>
#include <string.h>

#define FM_LINE_MAX 2048

static const char *
skill_text(void)
{
	return (const char *)mcp_skill_md;
}

/* SKILL.md's frontmatter as an object: each "key: value" line between the
 * opening and closing "---", value trimmed. */
static struct json_object *
skill_frontmatter(void)
{
	struct json_object *fm = json_object_new_object();
	const char *p = skill_text(), *end = p + mcp_skill_md_len, *nl, *colon;
	char line[FM_LINE_MAX];
	size_t n;

	if (mcp_skill_md_len < 4 || strncmp(p, "---\n", 4) != 0)
		return fm;
	for (p += 4; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		n = (size_t)(nl - p);
		if (n == 3 && strncmp(p, "---", 3) == 0)
			break;
		if (n >= sizeof line || (colon = memchr(p, ':', n)) == NULL)
			continue;
		memcpy(line, p, n);
		line[n] = '\0';
		line[colon - p] = '\0';
		colon = line + (colon - p) + 1;
		while (*colon == ' ')
			colon++;
		json_object_object_add(fm, line, json_object_new_string(colon));
	}
	return fm;
}

static const char *
skill_fm_string(struct json_object *fm, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(fm, key, &v) ? json_object_get_string(v) : "";
}

struct json_object *
mcp_skill_entry(void)
{
	struct json_object *e = json_object_new_object(), *files = json_object_new_array();
	struct json_object *f = json_object_new_object();

	json_object_object_add(e, "uri", json_object_new_string(MCP_SKILL_URI));
	json_object_object_add(e, "frontmatter", skill_frontmatter());
	json_object_object_add(f, "uri", json_object_new_string(MCP_SKILL_URI));
	json_object_object_add(f, "digest", json_object_new_string(mcp_skill_md_digest));
	json_object_object_add(f, "size", json_object_new_int64((int64_t)mcp_skill_md_len));
	json_object_array_add(files, f);
	json_object_object_add(e, "resources", files);
	return e;
}

struct json_object *
mcp_skill_resource(void)
{
	struct json_object *r = json_object_new_object(), *fm = skill_frontmatter();

	json_object_object_add(r, "uri", json_object_new_string(MCP_SKILL_URI));
	json_object_object_add(r, "name", json_object_new_string(skill_fm_string(fm, "name")));
	json_object_object_add(r, "description", json_object_new_string(skill_fm_string(fm, "description")));
	json_object_object_add(r, "mimeType", json_object_new_string("text/markdown"));
	json_object_object_add(r, "size", json_object_new_int64((int64_t)mcp_skill_md_len));
	json_object_put(fm);
	return r;
}

struct json_object *
mcp_skill_contents(const char *uri)
{
	struct json_object *arr, *c;

	if (uri == NULL || strcmp(uri, MCP_SKILL_URI) != 0)
		return NULL;
	arr = json_object_new_array();
	c = json_object_new_object();
	json_object_object_add(c, "uri", json_object_new_string(MCP_SKILL_URI));
	json_object_object_add(c, "mimeType", json_object_new_string("text/markdown"));
	json_object_object_add(c, "text", json_object_new_string_len(skill_text(), (int)mcp_skill_md_len));
	json_object_array_add(arr, c);
	return arr;
}
