/* Unit tests: JSON strings from arbitrary bytes (sysfs text is not always UTF-8), the growing string
 * buffer. */
#include <errno.h>

#include "gpup2p/buf.h"
#include "gpup2p/out.h"
#include "unit.h"

/* The JSON text gp_json_str writes for s at top level (one line, no key), newline removed. */
static const char *json_of(const char *s)
{
	static char out[512];
	struct gp_json j;
	FILE *f = fmemopen(out, sizeof(out), "w");

	gp_json_init(&j, f, 0);
	gp_json_arr(&j, NULL);
	gp_json_str(&j, NULL, s);
	gp_json_end(&j, ']');
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return out;
}

static void json_tests(void)
{
	/* valid UTF-8 passes through byte for byte */
	CHECK_STR(json_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
		  "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"]",
		  "2-, 3- and 4-byte sequences and U+10FFFF kept as they are");
	CHECK_STR(json_of("\xed\x9f\xbf\xee\x80\x80"), "[\"\xed\x9f\xbf\xee\x80\x80\"]", "U+D7FF and U+E000 (beside the surrogates) kept");
	/* control characters */
	CHECK_STR(json_of("a\x01" "b\x1f" "c\x7f" "d\n\t\r\"\\"), "[\"a\\u0001b\\u001fc\\u007fd\\n\\t\\r\\\"\\\\\"]",
		  "controls and DEL as \\u00XX, the usual short escapes");
	/* invalid: each byte that starts no well-formed sequence is U+FFFD */
	CHECK_STR(json_of("x\x80y"), "[\"x\\ufffdy\"]", "lone continuation byte");
	CHECK_STR(json_of("\xff\xfe"), "[\"\\ufffd\\ufffd\"]", "0xFF 0xFE (never in UTF-8)");
	CHECK_STR(json_of("\xc0\xaf"), "[\"\\ufffd\\ufffd\"]", "overlong '/' (C0 AF)");
	CHECK_STR(json_of("\xe0\x80\xaf"), "[\"\\ufffd\\ufffd\\ufffd\"]", "overlong 3-byte (E0 80 AF)");
	CHECK_STR(json_of("\xed\xa0\x80"), "[\"\\ufffd\\ufffd\\ufffd\"]", "UTF-16 surrogate U+D800 (ED A0 80)");
	CHECK_STR(json_of("\xf4\x90\x80\x80"), "[\"\\ufffd\\ufffd\\ufffd\\ufffd\"]", "above U+10FFFF (F4 90 80 80)");
	CHECK_STR(json_of("\xf5\x80"), "[\"\\ufffd\\ufffd\"]", "F5 lead byte");
	CHECK_STR(json_of("ok\xe2\x82"), "[\"ok\\ufffd\\ufffd\"]", "sequence cut by the end of the string");
	CHECK_STR(json_of("\xc3" "A"), "[\"\\ufffdA\"]", "lead byte followed by ASCII: the ASCII survives");
	CHECK_STR(json_of("\xe2\x82\"x"), "[\"\\ufffd\\ufffd\\\"x\"]", "cut sequence before a quote: the quote still escaped");
}

static void buf_tests(void)
{
	struct gp_buf b = GP_BUF_INIT;
	size_t want = 0;
	int ok = 1;

	CHECK_STR(gp_buf_str(&b), "", "empty buffer reads as \"\"");
	for (int i = 0; i < 1000 && ok; i++) {
		ok = gp_buf_addf(&b, "%s0000:%02x:00.0", i ? ";" : "pci=disable_acs_redir=", i & 0xff) == 0;
		want += (i ? 1 : 22) + 12;
	}
	CHECK(ok && b.len == want && strlen(gp_buf_str(&b)) == want && !b.oom,
	      "1000 appends: %zu bytes, nothing cut (%zu)", want, b.len);
	CHECK(!strncmp(gp_buf_str(&b), "pci=disable_acs_redir=0000:00:00.0;0000:01:00.0;", 48) &&
	      !strcmp(gp_buf_str(&b) + want - 13, ";0000:e7:00.0"), "first and last entries intact");
	gp_buf_reset(&b);
	CHECK(b.len == 0 && !strcmp(gp_buf_str(&b), "") && gp_buf_addf(&b, "%d", 42) == 0 &&
	      !strcmp(gp_buf_str(&b), "42"), "reset, then reuse");
	gp_buf_free(&b);
	CHECK(b.s == NULL && b.len == 0 && b.cap == 0, "free empties it");
}

int main(void)
{
	json_tests();
	buf_tests();
	return unit_done();
}
