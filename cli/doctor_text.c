/* gpup2p doctor — the text report for people (doctor_out.h): findings under one heading per check,
 * identical findings of several subjects folded into one, a NIC's virtual functions listed with their
 * physical function as one row ("0000:04:00.0 (NIC0+126VFs)"), wrapped to the terminal's width. */
#include <stdlib.h>
#include <string.h>

#include "doctor_out.h"
#include "gpup2p/arena.h"
#include "gpup2p/buf.h"
#include "gpup2p/stats.h"
#include "gpup2p/strmap.h"

#define NBSP '\x1f'             /* a space cli_wrap does not break at (printed as a space) */

static const char *const sev_title[GP_SEV_N] = { "errors", "warnings", "info", "ok", "unknown", "skipped" };
static const char *const sev_name[GP_SEV_N] = { "error", "warning", "info", "ok", "unknown", "skipped" };
static const char *const sev_sgr[GP_SEV_N] = { "\033[1;31m", "\033[1;33m", "\033[36m", "\033[32m", "\033[35m",
					       "\033[2m" };
/* headings in the order they print */
static const enum gp_sev order[] = { GP_SEV_ERROR, GP_SEV_WARNING, GP_SEV_UNKNOWN, GP_SEV_INFO, GP_SEV_OK,
				     GP_SEV_SKIPPED };
#define NORDER (int)(sizeof(order) / sizeof(order[0]))

static int rank(enum gp_sev s)
{
	for (int i = 0; i < NORDER; i++)
		if (order[i] == s)
			return i;
	return NORDER - 1;
}

/* the length of a message's leading device label ("GPU3: ", "NIC0: "), 0 if none */
static size_t label_len(const char *m)
{
	size_t n = strncmp(m, "GPU", 3) && strncmp(m, "NIC", 3) ? 0 : 3, d = strspn(m + n, "0123456789");

	return n && d && m[n + d] == ':' && m[n + d + 1] == ' ' ? n + d + 2 : 0;
}

/* s with every occurrence of subj, and of name (a device name, "NIC8", not followed by a digit; NULL:
 * none), as "{}": in a (NULL: heap, free it); NULL for s NULL */
static char *generic(const char *s, const char *subj, const char *name, struct gp_arena *a)
{
	size_t ls = strlen(subj), ln = name ? strlen(name) : 0, n = s ? strlen(s) * 2 + 3 : 0;
	char *r = !s ? NULL : a ? gp_arena_take(a, n, 1) : malloc(n), *o = r;

	if (!r)
		return NULL;
	while (*s) {
		size_t k = ls && !strncmp(s, subj, ls) ? ls
			   : ln && !strncmp(s, name, ln) && (s[ln] < '0' || s[ln] > '9') ? ln : 0;

		if (k) {
			memcpy(o, "{}", 2);
			o += 2;
			s += k;
		} else {
			*o++ = *s++;
		}
	}
	*o = 0;
	if (a) /* to its length: listing_keys keeps four per finding */
		gp_arena_trim(a, r, (size_t)(o - r) + 1);
	return r;
}

/* The subjects of one listing and what folds a NIC's virtual functions into their physical function's
 * row (gp_topo_fold_vfs): each finding's subject as a matrix entry (its BDF or RDMA device; -1 none). */
struct listing {
	const struct gp_topo *t;     /* NULL: nothing folds */
	int *ent;                    /* per finding */
	int *js, *in, *vfs, k;       /* the listing: findings, their entries, VFs folded (k of them) */
	int *same;                   /* -v: per item, its VFs whose evidence is its own; -1 on those VFs */
	int *gen;                    /* -v: per item, 1 when those VFs' evidence is its own but for names */
	int *sub;                    /* -v: per PF's item, its first VF whose evidence is not the PF's; -1 */
	int *pos;                    /* per matrix entry, -1 (gp_topo_fold_vfs's scratch) */
	/* per finding: its message (less its device label) and fix with the subject as "{}" (g[0], g[1]),
	 * and with its device name too (g[2], g[3]; NULL unless a group of several functions holds it);
	 * next[0][i]: the next finding after i of its check and severity whose g[0], g[1] are i's, next[1][i]
	 * the next in its group whose g[2], g[3] are: the only candidates same() can accept, so folding
	 * visits each finding's equals and not all that follow it */
	char **g[4];
	struct gp_arena keys;        /* where g[k][i] lie */
	int *next[2];
	int nf;                      /* findings (the length of g[k]) */
};

/* The device name ("NIC8") of finding j's subject, NULL when it is no GPU or NIC. */
static const char *dev_name(const struct listing *l, int j)
{
	return l->t && l->ent[j] >= 0 ? l->t->devs[l->ent[j]].name : NULL;
}

/* Whether finding j's device shares a group of several functions (a NIC's PF and its VFs). */
static int grouped(const struct listing *l, int j)
{
	const struct gp_topo *t = l->t;

	return t && l->ent[j] >= 0 && t->devs[t->devs[l->ent[j]].group].members >= 2;
}

/* Each finding's generic texts and the chains of findings that may fold with it (struct listing).
 * 0, or -1 out of memory. */
static int listing_keys(struct listing *l, const struct gp_findings *out, int verbose)
{
	struct gp_strmap last[2] = { { 0 }, { 0 } };
	struct gp_buf key = GP_BUF_INIT;
	size_t n = (size_t)out->n + 1;
	int rc = 0;

	for (int k = 0; k < 4; k++)
		if (!(l->g[k] = calloc(n, sizeof(char *))))
			return -1;
	if (!(l->next[0] = malloc(n * sizeof(int))) || !(l->next[1] = malloc(n * sizeof(int))))
		return -1;
	for (int i = 0; i < out->n && !rc; i++) {
		const struct gp_finding *f = &out->v[i];
		const char *msg = f->message + label_len(f->message);
		char grp[16];

		l->next[0][i] = l->next[1][i] = -1;
		/* without -v an ok or skipped finding is listed by its check's id, never folded */
		if (!verbose && (f->sev == GP_SEV_OK || f->sev == GP_SEV_SKIPPED))
			continue;
		l->g[0][i] = generic(msg, f->subject, NULL, &l->keys);
		l->g[1][i] = f->fix ? generic(f->fix, f->subject, NULL, &l->keys) : NULL;
		if (grouped(l, i)) {
			l->g[2][i] = generic(msg, f->subject, dev_name(l, i), &l->keys);
			l->g[3][i] = f->fix ? generic(f->fix, f->subject, dev_name(l, i), &l->keys) : NULL;
		}
		for (int w = 0; w < 2 && !rc; w++) {
			int prev;

			if (!l->g[2 * w][i] || (f->fix && !l->g[2 * w + 1][i])) {
				rc = w == 0 || grouped(l, i) ? -1 : 0;
				continue;
			}
			snprintf(grp, sizeof(grp), "%d", w ? l->t->devs[l->ent[i]].group : -1);
			gp_buf_reset(&key);
			gp_buf_add(&key, f->check->id, "\n", sev_name[f->sev], "\n", grp, "\n", l->g[2 * w][i], "\n",
				   f->fix ? "+" : "-", f->fix ? l->g[2 * w + 1][i] : "", (char *)NULL);
			if (key.oom) {
				rc = -1;
				break;
			}
			if ((prev = gp_strmap_get(&last[w], gp_buf_str(&key))) >= 0)
				l->next[w][prev] = i;
			rc = gp_strmap_put(&last[w], gp_buf_str(&key), i) ? -1 : 0;
		}
	}
	gp_strmap_free(&last[0]);
	gp_strmap_free(&last[1]);
	gp_buf_free(&key);
	return rc;
}

/* Whether a and b say the same but for their subjects (w 0) or but for their subjects and device names
 * too (w 1): their generic texts (listing_keys). */
static int same_text(const struct listing *l, int a, int b, int w)
{
	char **m = l->g[2 * w], **fx = l->g[2 * w + 1];

	return m[a] && m[b] && !strcmp(m[a], m[b]) && (!fx[a] == !fx[b]) && (!fx[a] || !strcmp(fx[a], fx[b]));
}

static int listing_init(struct listing *l, const struct gp_doctor_ctx *d, int verbose)
{
	const struct gp_findings *out = &d->out;
	const struct gp_topo *t = d->topo;
	struct gp_strmap m = { 0 };
	size_t n = (size_t)out->n + 1;

	memset(l, 0, sizeof(*l));
	l->nf = out->n;
	l->ent = calloc(n, sizeof(int)), l->js = calloc(n, sizeof(int));
	l->in = calloc(n, sizeof(int)), l->vfs = calloc(n, sizeof(int)), l->same = calloc(n, sizeof(int));
	l->gen = calloc(n, sizeof(int)), l->sub = calloc(n, sizeof(int));
	l->pos = calloc((size_t)(t ? t->n : 0) + 1, sizeof(int));
	if (!l->ent || !l->js || !l->in || !l->vfs || !l->same || !l->gen || !l->sub || !l->pos)
		return -1;
	for (int i = 0; t && i < t->n; i++) {
		l->pos[i] = -1;
		if (gp_strmap_put(&m, t->pci->devs[t->devs[i].pci].bdf, i) || gp_strmap_put(&m, t->devs[i].label, i)) {
			gp_strmap_free(&m);
			return -1;
		}
	}
	for (int i = 0; i < out->n; i++)
		l->ent[i] = t ? gp_strmap_get(&m, out->v[i].subject) : -1;
	gp_strmap_free(&m);
	l->t = t;
	return listing_keys(l, out, verbose);
}

/* Whether findings v[i] and v[j] are one finding of two subjects: same check and severity, the same
 * message but for the subject and a device label, the same fix but for the subject; for two functions
 * of one NIC (its physical function and its virtual functions, a group of the matrix), also but for
 * their device names ("NIC0 is not owned by VFIO", "NIC8 is ..."): *by_name is then set. */
static int same(const struct listing *l, const struct gp_finding *v, int i, int j, int *by_name)
{
	const struct gp_finding *a = &v[i], *b = &v[j];
	const struct gp_topo *t = l->t;
	int ea = l->ent[i], eb = l->ent[j];

	if (a->check != b->check || a->sev != b->sev || !a->fix != !b->fix)
		return 0;
	if (same_text(l, i, j, 0))
		return 1;
	if (!t || ea < 0 || eb < 0 || t->devs[ea].group != t->devs[eb].group || t->devs[t->devs[ea].group].members < 2 ||
	    !same_text(l, i, j, 1))
		return 0;
	*by_name = 1;
	return 1;
}

static void listing_free(struct listing *l)
{
	free(l->ent), free(l->js), free(l->in), free(l->vfs), free(l->same), free(l->gen), free(l->sub), free(l->pos);
	for (int k = 0; k < 4; k++)
		free(l->g[k]);
	gp_arena_free(&l->keys);
	free(l->next[0]), free(l->next[1]);
}

/* Add finding j to the listing. */
static void listing_add(struct listing *l, int j)
{
	l->js[l->k] = j;
	l->in[l->k++] = l->ent[j];
}

/* The listing's subjects, ", " between, into b: "0000:15:00.0 (NIC0)" (labels: the message's device
 * label), a physical function listed with its virtual functions "0000:04:00.0 (NIC0+126VFs)" and those
 * VFs not on their own; never broken. */
static void listing_print(struct listing *l, struct gp_buf *b, const struct gp_finding *v, int labels)
{
	if (l->t)
		gp_topo_fold_vfs(l->t, l->in, l->k, l->vfs, l->pos);
	for (int k = 0, shown = 0; k < l->k; k++) {
		const struct gp_finding *f = &v[l->js[k]];
		size_t ll = labels ? label_len(f->message) : 0;
		char name[48];

		if (l->t && l->vfs[k] < 0)
			continue;
		if (shown++)
			gp_buf_add(b, ", ", (char *)NULL);
		for (const char *p = f->subject; *p;) { /* its spaces as NBSP: a run at a time, not a character */
			size_t run = strcspn(p, " ");

			gp_buf_addf(b, "%.*s%s", (int)run, p, p[run] ? (char[]){ NBSP, 0 } : "");
			p += run + !!p[run];
		}
		if (l->t && l->vfs[k] > 0)
			gp_buf_addf(b, "%c(%s)", NBSP, gp_topo_vfs_name(l->t, l->in[k], l->vfs[k], name, sizeof(name)));
		else if (ll)
			gp_buf_addf(b, "%c(%.*s)", NBSP, (int)(ll - 2), f->message);
	}
}

/* Whether a's evidence is b's: word for word (1), or but for each one's subject and device name (2: na
 * and nb, as generic() reads them), or not (0). */
static int same_evidence(const struct gp_finding *a, const struct gp_finding *b, const char *na, const char *nb)
{
	int r = 1;

	if (a->nev != b->nev)
		return 0;
	for (int e = 0; e < a->nev; e++)
		if (strcmp(a->ev[e].key, b->ev[e].key) || strcmp(a->ev[e].value, b->ev[e].value))
			r = 2;
	for (int e = 0; r == 2 && e < a->nev; e++) { /* "/sys/class/infiniband/mlx5_9/ports": its name as "{}" */
		char *ka = generic(a->ev[e].key, a->subject, na, NULL), *kb = generic(b->ev[e].key, b->subject, nb, NULL);
		char *va = generic(a->ev[e].value, a->subject, na, NULL), *vb = generic(b->ev[e].value, b->subject, nb, NULL);
		int eq = ka && kb && va && vb && !strcmp(ka, kb) && !strcmp(va, vb);

		free(ka), free(kb), free(va), free(vb);
		if (!eq)
			return 0;
	}
	return r;
}

/* -v: the evidence of each subject of the listing (printed by listing_print). A virtual function's that
 * is its physical function's, but for their names, goes in the PF's line ("0000:04:00.0 (NIC0+126VFs):
 * ..."; "{}" for each one's name where they differ); the VFs whose evidence is not the PF's but one
 * another's share the first one's line ("0000:04:00.1 (NIC8 and 125 more VFs of NIC0): ..."). */
static void listing_evidence(struct listing *l, const struct gp_finding *v, int idw, int width)
{
	struct gp_buf b = { 0 };
	char name[48];

	for (int p = 0; p < l->k; p++)
		l->same[p] = l->gen[p] = 0, l->sub[p] = -1;
	for (int p = 0; l->t && p < l->k; p++) {
		int q = -1 - l->vfs[p], r, s;

		if (l->vfs[p] >= 0)
			continue;
		/* its PF's evidence, else that of the first of the PF's VFs not like the PF */
		r = (s = same_evidence(&v[l->js[p]], &v[l->js[q]], dev_name(l, l->js[p]), dev_name(l, l->js[q]))) ? q
		    : l->sub[q];
		if (!s && r >= 0)
			s = same_evidence(&v[l->js[p]], &v[l->js[r]], dev_name(l, l->js[p]), dev_name(l, l->js[r]));
		if (!s) {
			l->sub[q] = p;
			continue;
		}
		l->same[r]++;
		l->gen[r] |= s == 2;
		l->same[p] = -1;
	}
	for (int p = 0; p < l->k; p++) {
		const struct gp_finding *f = &v[l->js[p]];
		const char *nm = dev_name(l, l->js[p]);
		int col;

		if (l->same[p] < 0 || !f->nev)
			continue;
		gp_buf_reset(&b);
		if (l->k > 1 && l->same[p] && l->vfs[p] < 0)
			gp_buf_addf(&b, "%s%c(%s%cand%c%d%cmore%cVF%s%cof%c%s):", f->subject, NBSP, l->t->devs[l->in[p]].name,
				    NBSP, NBSP, l->same[p], NBSP, NBSP, l->same[p] > 1 ? "s" : "", NBSP, NBSP,
				    l->t->devs[l->in[-1 - l->vfs[p]]].name);
		else if (l->k > 1 && l->same[p])
			gp_buf_addf(&b, "%s%c(%s):", f->subject, NBSP,
				    gp_topo_vfs_name(l->t, l->in[p], l->same[p], name, sizeof(name)));
		else if (l->k > 1)
			gp_buf_addf(&b, "%s:", f->subject);
		for (int e = 0; e < f->nev; e++) {
			char *gk = l->gen[p] ? generic(f->ev[e].key, f->subject, nm, NULL) : NULL;
			char *gv = l->gen[p] ? generic(f->ev[e].value, f->subject, nm, NULL) : NULL;

			gp_buf_addf(&b, "%s %s = %s", e ? ";" : "", gk ? gk : f->ev[e].key, gv ? gv : f->ev[e].value);
			free(gk), free(gv);
		}
		col = printf("  %*s  evidence%s", idw, "", l->k > 1 ? " " : ":");
		cli_wrap(stdout, b.s ? b.s : "", col, idw + 9, width);
	}
	gp_buf_free(&b);
}

/* Print the findings of v[] that fold with v[i] (those not yet done), marking them done. */
static void print_folded(const struct cli *c, struct listing *l, const struct gp_finding *v, int n, int i, char *done,
			 int idw, enum gp_sev heading, int width)
{
	const struct gp_finding *f = &v[i];
	struct gp_buf b = { 0 };
	int k = 0, col, by_name = 0;
	char *m, *fx;

	l->k = 0;
	/* i's equals lie on its two chains, each in index order: merged, in order */
	for (int c0 = l->next[0][i], c1 = l->next[1][i], j = i; j >= 0 && j < n;) {
		GP_STAT_ADD(compares, 1);
		if (!done[j] && (j == i || same(l, v, i, j, &by_name))) {
			listing_add(l, j);
			k++;
			done[j] = 1;
		}
		j = c0 >= 0 && (c1 < 0 || c0 <= c1) ? c0 : c1;
		if (j >= 0 && j == c0)
			c0 = l->next[0][c0];
		if (j >= 0 && j == c1)
			c1 = l->next[1][c1];
	}
	listing_print(l, &b, v, 1);
	if (f->sev != heading)
		gp_buf_addf(&b, "%c(%s)", NBSP, sev_name[f->sev]);
	/* several subjects: each one's BDF, and its device name where a NIC's functions folded, as "{}" */
	m = k > 1 ? generic(f->message + label_len(f->message), f->subject, by_name ? dev_name(l, i) : NULL, NULL) : NULL;
	fx = k > 1 ? generic(f->fix, f->subject, by_name ? dev_name(l, i) : NULL, NULL) : NULL;
	gp_buf_addf(&b, ": %s", m ? m : k > 1 ? f->message + label_len(f->message) : f->message);
	col = printf("  %-*s  ", idw, f->check->id);
	cli_wrap(stdout, b.s ? b.s : "", col, idw + 4, width);
	if (f->fix) {
		int each = fx && strstr(fx, "{}");

		col = printf("  %*s  fix%s: ", idw, "", each ? " ({} = each subject)" : "");
		cli_wrap(stdout, each ? fx : f->fix, col, idw + 9, width);
	}
	if (c->verbose)
		listing_evidence(l, v, idw, width);
	free(m), free(fx);
	gp_buf_free(&b);
}

/* A check's ok (or skipped) findings under the heading of its other findings: one line, "also ok: "
 * and their subjects, marked done. */
static void also(const struct gp_findings *out, struct listing *l, int i, char *done, int idw, int width)
{
	const struct gp_finding *f = &out->v[i];
	struct gp_buf b = { 0 };
	int col;

	gp_buf_addf(&b, "also %s: ", sev_name[f->sev]);
	GP_STAT_ADD(compares, out->n - i);
	l->k = 0;
	for (int j = i; j < out->n; j++)
		if (!done[j] && out->v[j].check == f->check && out->v[j].sev == f->sev) {
			listing_add(l, j);
			done[j] = 1;
		}
	listing_print(l, &b, out->v, 0);
	col = printf("  %-*s  ", idw, f->check->id);
	cli_wrap(stdout, b.s ? b.s : "", col, idw + 4, width);
	gp_buf_free(&b);
}

/* One line on the snapshot the root is: who wrote it, when, of what, and whether it is older. */
static void print_snapshot(struct gp_buf *b, const struct gp_snapshot_info *i)
{
	int kernel = i->kernel[0] && strcmp(i->kernel, "unknown");

	gp_buf_addf(b, "snapshot: %s, %s, %s%s%s%s; format %d%s", i->writer[0] ? i->writer : "writer unknown",
	       i->created[0] ? i->created : "date unknown", !strcmp(i->source, "live") ? "of a live system" :
	       "of a root directory", kernel ? ", kernel " : "", kernel ? i->kernel : "",
	       i->nunread ? ", with files it could not read" : "", i->format,
	       i->format < GP_SNAPSHOT_FORMAT ? " (older: checks of what it lacks are skipped)" : "");
}

static void print_header(struct gp_doctor_ctx *d, int width)
{
	const char *host = gp_doctor_host(d);
	struct gp_buf b = { 0 };

	gp_buf_addf(&b, "gpup2p doctor: %s%s", host ? "host " : "", host ? host : "");
	if (d->src.live)
		gp_buf_addf(&b, "%slive system", host ? ", " : "");
	else
		gp_buf_addf(&b, "%sroot %s (offline: live-only checks are skipped)", host ? ", " : "", d->root->dir);
	cli_wrap(stdout, b.s ? b.s : "", 0, 2, width);
	gp_buf_reset(&b);
	if (d->src.snapshot)
		print_snapshot(&b, &d->src.snap);
	gp_buf_addf(&b, "%sNVML: %s%s%s; CUDA: %s", b.len ? "\n" : "", d->src.nvml ? "available" : "not available (",
		    d->src.nvml ? (d->facts->driver[0] ? ", driver " : "") : d->src.nvml_why,
		    d->src.nvml ? d->facts->driver : ")", d->src.cuda ? "loaded" : d->src.cuda_why);
	for (char *line = b.s, *nl; line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		cli_wrap(stdout, line, 0, 2, width);
	}
	gp_buf_free(&b);
}

/* head[i]: the heading finding i goes under, the gravest of its check's findings (one check, one
 * heading); ck[i]: the index of its check among the distinct checks, in order of first finding. One pass
 * over the findings and a short list of checks (tens), not every pair of findings (tens of thousands on
 * a host with SR-IOV). Returns the number of distinct checks. */
static int headings(const struct gp_findings *out, enum gp_sev *head, int *ck)
{
	const struct gp_doctor_check **seen = calloc((size_t)out->n + 1, sizeof(*seen));
	int *grave = calloc((size_t)out->n + 1, sizeof(*grave)), nk = 0;
	unsigned long steps = 0;

	for (int i = 0, k = -1; i < out->n; i++, steps++) {
		if (k < 0 || !seen || seen[k] != out->v[i].check) /* findings of one check mostly follow each other */
			for (k = 0; k < nk && seen && seen[k] != out->v[i].check; k++)
				steps++;
		if (k == nk) {
			if (seen)
				seen[nk] = out->v[i].check;
			if (grave)
				grave[nk] = rank(out->v[i].sev);
			nk++;
		}
		ck[i] = k;
		if (grave && rank(out->v[i].sev) < grave[k])
			grave[k] = rank(out->v[i].sev);
	}
	for (int i = 0; i < out->n; i++)
		head[i] = grave ? order[grave[ck[i]]] : out->v[i].sev;
	free(seen), free(grave);
	GP_STAT_ADD(compares, steps);
	return nk;
}

int doc_text(const struct cli *c, struct gp_doctor_ctx *d, int strict, const int sum[GP_SEV_N])
{
	const struct gp_findings *out = &d->out;
	enum gp_sev *head = calloc((size_t)out->n + 1, sizeof(*head));
	char *done = calloc((size_t)out->n + 1, 1), *counted;
	int *ck = calloc((size_t)out->n + 1, sizeof(*ck));
	int width = cli_term_width(), idw = 0, nk;
	struct listing lst;

	counted = calloc((size_t)out->n + 1, 1);
	if (listing_init(&lst, d, c->verbose) || !head || !done || !ck || !counted) {
		free(head), free(done), free(ck), free(counted), listing_free(&lst);
		return EX_ERROR;
	}
	nk = headings(out, head, ck);
	for (int i = 0; i < out->n; i++) {
		int l = (int)strlen(out->v[i].check->id);

		idw = l > idw ? l : idw;
	}
	if (!c->quiet)
		print_header(d, width);
	for (int g = 0; g < NORDER; g++) {
		enum gp_sev s = order[g];
		int alarm = s == GP_SEV_ERROR || s == GP_SEV_WARNING || (strict && s == GP_SEV_UNKNOWN);
		int full = alarm || s == GP_SEV_UNKNOWN || s == GP_SEV_INFO || c->verbose;
		int nf = 0, more = 0, nc = 0, col = 0;

		for (int i = 0; i < out->n; i++) {
			nf += head[i] == s && out->v[i].sev == s;
			more += head[i] == s && out->v[i].sev != s;
		}
		memset(counted, 0, (size_t)nk);
		for (int i = 0; i < out->n; i++)        /* checks under it: count each once */
			if (head[i] == s && !counted[ck[i]]) {
				counted[ck[i]] = 1;
				nc++;
			}
		if (!nf || (c->quiet && !alarm))
			continue;
		printf("\n%s%s (%d finding%s", c->color ? sev_sgr[s] : "", sev_title[s], nf, nf == 1 ? "" : "s");
		if (!full)
			printf(" of %d check%s", nc, nc == 1 ? "" : "s");
		if (more)
			printf("; %d more of these checks", more);
		printf(")%s\n", c->color ? "\033[0m" : "");
		for (int i = 0; i < out->n; i++) {
			const struct gp_finding *f = &out->v[i];
			int w = (int)strlen(f->check->id), lw = width ? width : 80;

			if (head[i] != s || done[i])
				continue;
			if (full && (f->sev == s || (f->sev != GP_SEV_OK && f->sev != GP_SEV_SKIPPED))) {
				print_folded(c, &lst, out->v, out->n, i, done, idw, s, width);
				continue;
			}
			if (full) {                     /* ok or skipped beside its check's alarms: the subjects */
				also(out, &lst, i, done, idw, width);
				continue;
			}
			GP_STAT_ADD(compares, out->n - i);
			for (int j = i; j < out->n; j++)        /* ok and skipped, briefly: the ids, wrapped */
				done[j] |= out->v[j].check == f->check;
			if (col && col + w + 1 > lw) {
				putchar('\n');
				col = 0;
			}
			printf("%s%s", col ? " " : "  ", f->check->id);
			col += w + (col ? 1 : 2);
		}
		if (col)
			putchar('\n');
	}
	if (!c->quiet) {
		char line[256];

		snprintf(line, sizeof(line), "summary: %d error%s, %d warning%s, %d info, %d ok, %d unknown, %d skipped",
			 sum[0], sum[0] == 1 ? "" : "s", sum[1], sum[1] == 1 ? "" : "s", sum[2], sum[3], sum[4], sum[5]);
		putchar('\n');
		cli_wrap(stdout, line, 0, 2, width);
	}
	free(head), free(done), free(ck), free(counted), listing_free(&lst);
	return 0;
}
