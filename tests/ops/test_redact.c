/*
 * test_redact.c - the redaction table (daemon/core/redact.c): every kind of
 * secret is replaced (its recognisable prefix kept), text that only looks
 * near a secret is left alone, JSON stays JSON, literals go whole.
 * Prints "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/redact.h"

static int pass, fail;

static void
expect(const char *name, const struct redact *r, const char *in, const char *want_in,
    const char *secret)
{
	char *out = redact_text(r, in, NULL);
	int ok = strstr(out, want_in) != NULL && (secret == NULL || strstr(out, secret) == NULL);

	if (ok) {
		pass++;
		printf("ok   %s\n", name);
	} else {
		fail++;
		printf("FAIL %s: '%s' -> '%s'\n", name, in, out);
	}
	free(out);
}

static void
unchanged(const char *name, const struct redact *r, const char *in)
{
	int n = -1;
	char *out = redact_text(r, in, &n);

	if (strcmp(out, in) == 0 && n == 0) {
		pass++;
		printf("ok   %s\n", name);
	} else {
		fail++;
		printf("FAIL %s: '%s' -> '%s'\n", name, in, out);
	}
	free(out);
}

int
main(void)
{
	const char *lits[] = { "detm-token-Zq81xY", "", "abc", NULL };
	struct redact *r = redact_new(lits);
	char *out;
	json_object *o;

	expect("anthropic key", r, "key sk-ant-api03-AbCdEf_123456-xyz end", "key sk-ant-[REDACTED] end", "AbCdEf");
	expect("openrouter key", r, "OPENROUTER_API_KEY=sk-or-v1-0123456789abcdef0123", "sk-or-v1-[REDACTED]", "0123456789abcdef");
	expect("openai key", r, "using sk-proj-ABCDEFGHIJKLMNOPQRST now", "using sk-[REDACTED] now", "ABCDEFGHIJ");
	expect("google key", r, "k=AIzaSyA1234567890abcdefghijklmnopqrstu;", "AIza[REDACTED]", "SyA1234567890");
	expect("github token", r, "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_[REDACTED]", "abcdefghijklmnop");
	expect("github oauth token", r, "gho_ABCDEFGHIJKLMNOPQRSTUV1234", "gho_[REDACTED]", "ABCDEFGHIJKLMNOP");
	expect("github fine-grained", r, "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_[REDACTED]", "11ABCDEFG");
	expect("slack bot token", r, "xoxb-123456789012-abcdefABCDEF", "xoxb-[REDACTED]", "123456789012");
	expect("slack user token", r, "xoxp-123456789012-1234-abcdef", "xoxp-[REDACTED]", "123456789012");
	expect("aws key id", r, "aws AKIAIOSFODNN7EXAMPLE here", "aws AKIA[REDACTED] here", "IOSFODNN7EXAMPLE");
	expect("bearer header", r, "Authorization: Bearer eyJhbGciOi.abc.def", "Bearer [REDACTED]", "eyJhbGciOi");
	expect("bearer lower case", r, "authorization: bearer s3cr3tvalue", "bearer [REDACTED]", "s3cr3tvalue");
	expect("x-api-key header", r, "x-api-key: 9f8e7d6c5b4a", "x-api-key: [REDACTED]", "9f8e7d6c5b4a");
	expect("api_key=value", r, "GET /v1?api_key=plainvalue123&x=1", "api_key=[REDACTED]&x=1", "plainvalue123");
	expect("apikey: value", r, "apikey: hunter2hunter2", "apikey: [REDACTED]", "hunter2hunter2");
	expect("json api_key", r, "{\"api_key\": \"zzzz1111yyyy\"}", "\"api_key\": \"[REDACTED]\"", "zzzz1111yyyy");
	expect("json token", r, "{\"token\":\"qwertyuiop\"}", "\"token\":\"[REDACTED]\"", "qwertyuiop");
	expect("password=", r, "login password=correcthorse ok", "password=[REDACTED] ok", "correcthorse");
	expect("client_secret", r, "client_secret=abcd1234efgh", "client_secret=[REDACTED]", "abcd1234efgh");
	expect("detm token literal", r, "curl -H 'X: detm-token-Zq81xY'", "X: [REDACTED]'", "Zq81xY");
	expect("two secrets in a line", r, "a sk-ant-aaaaaaaaaaaa b ghp_bbbbbbbbbbbbbbbbbbbbbbbb",
	    "a sk-ant-[REDACTED] b ghp_[REDACTED]", "bbbbbbbbbbbbbbbbbbbb");
	/* Issue 33, item 7: forms that passed. */
	expect("secret followed by a marker", r, "key sk-ant-api03-AbCdEfGhIjKl[REDACTED] end",
	    "key sk-ant-[REDACTED]", "AbCdEfGhIjKl");
	expect("password followed by a marker", r, "password=hunter2hunter2[REDACTED]", "password=[REDACTED]",
	    "hunter2");
	expect("prefix before our own mark kept", r, "api_key=sk-or-v1-0123456789abcdef0123",
	    "api_key=sk-or-v1-[REDACTED]", "0123456789abcdef");
	expect("text after a marker still scanned", r, "[REDACTED] then sk-ant-api03-ZyXwVuTsRq",
	    "[REDACTED] then sk-ant-[REDACTED]", "ZyXwVuTsRq");
	expect("escaped JSON in a string", r, "{\"note\":\"{\\\"password\\\":\\\"hunter2\\\"}\"}",
	    "\\\"password\\\":\\\"[REDACTED]\\\"", "hunter2");
	expect("escaped JSON, token", r, "{\\\"token\\\": \\\"qwertyuiop\\\"}", "[REDACTED]", "qwertyuiop");
	expect("Authorization: Basic", r, "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]",
	    "dXNlcjpwYXNz");
	expect("json Authorization Basic", r, "{\"authorization\": \"basic dXNlcjpwYXNz\"}", "basic [REDACTED]\"",
	    "dXNlcjpwYXNz");
	expect("URL password", r, "db postgres://admin:s3cretPW@db.example:5432/app ok",
	    "db postgres://admin:[REDACTED]@db.example:5432/app ok", "s3cretPW");
	expect("URL password, no user", r, "redis://:r3disPass@cache:6379", "redis://:[REDACTED]@cache:6379",
	    "r3disPass");
	expect("PEM private key body", r,
	    "k=-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq+/x\nProc-Type: 4,ENCRYPTED\nabcDEF==\n"
	    "-----END RSA PRIVATE KEY-----\nnext",
	    "k=-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nnext", "MIIEpAIBAAKCAQEA");
	expect("PEM key, JSON-escaped newlines", r,
	    "\"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEA\\n-----END OPENSSH PRIVATE KEY-----\"",
	    "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1");
	expect("PEM key cut before its END", r, "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0",
	    "-----BEGIN PRIVATE KEY-----[REDACTED]", "MIIEvQIBADAN");
	expect("aws_secret_access_key", r, "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	    "aws_secret_access_key = [REDACTED]", "wJalrXUtnFEMI");
	expect("AWS_SECRET_ACCESS_KEY env", r, "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY;",
	    "AWS_SECRET_ACCESS_KEY=[REDACTED];", "wJalrXUtnFEMI");
	expect("AWS secret beside its key id", r, "creds AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	    "creds AKIA[REDACTED] [REDACTED]", "wJalrXUtnFEMI");
	expect("AWS secret in a CSV after its key id", r, "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	    "AKIA[REDACTED],[REDACTED]", "wJalrXUtnFEMI");
	unchanged("new forms redacted stay redacted", r,
	    "Authorization: Basic [REDACTED] https://u:[REDACTED]@h -----BEGIN PRIVATE KEY-----[REDACTED]"
	    "-----END PRIVATE KEY----- aws_secret_access_key=[REDACTED] \\\"token\\\":\\\"[REDACTED]\\\"");
	unchanged("URLs without a password", r, "see https://example.com:8443/a@b and mailto:x@y.z, ssh://git@host");
	unchanged("basic in prose", r, "basic authentication is off; the basic plan");
	unchanged("plain text", r, "the model said: no prompt yet; retrying in 2 s");
	unchanged("token counts", r, "{\"max_tokens\": 200, \"tokens_in\": 5, \"input_tokens\": 7}");
	unchanged("short literal ignored", r, "abc def");
	unchanged("redacted stays redacted", r, "Bearer [REDACTED] sk-ant-[REDACTED] api_key=[REDACTED]");
	unchanged("sk- in a word", r, "task-list desk-top risk-free");
	/* JSON with an escaped quote after a secret value stays valid JSON. */
	out = redact_text(r, "{\"note\":\"password=abc12345\\\" and \\\\ more\",\"k\":1}", NULL);
	o = json_tokener_parse(out);
	if (o != NULL && strstr(out, "abc12345") == NULL) {
		pass++;
		printf("ok   JSON stays valid\n");
	} else {
		fail++;
		printf("FAIL JSON stays valid: %s\n", out);
	}
	json_object_put(o);
	free(out);
	out = redact_text(NULL, "sk-ant-xxxxxxxxxxxxxxx", NULL);
	if (strcmp(out, "sk-ant-xxxxxxxxxxxxxxx") == 0)
		pass++, printf("ok   no redactor: a copy\n");
	else
		fail++, printf("FAIL no redactor: a copy\n");
	free(out);
	redact_free(r);
	redact_free(NULL);
	printf("%d passed, %d failed\n", pass, fail);
	return fail != 0;
}
