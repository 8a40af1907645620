/*
 * svg: lay out and write a flame graph (see svg.h). The stacks come
 * sorted by their frames' names, so that a frame and all its callees are
 * one run of neighbouring stacks: one pass, with the frames of the
 * current stack open, gives every frame its first sample and its width.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "opts.h"
#include "svg.h"
#include "svg-js.h"
#include "view.h"

#define SVG_FRAME_H	16	/* a frame's height, pixels */
#define SVG_FONT	12
#define SVG_XPAD	10
#define SVG_TOP		68	/* title, subtitle, buttons and search */
#define SVG_BOTTOM	28	/* the details line */
#define SVG_MIN_PX	0.1	/* narrower frames are left out */
#define SVG_CHAR_W	0.59	/* a character's width, in font sizes */
/* A name cut to fewer characters than this shows none: "s.." names
 * nothing, and a whole machine's graph had 72 of its 88 cut labels so */
#define SVG_MIN_CUT	4
#define SVG_DIFF_SCALE	1073741824.0	/* a side's whole share, in width */

struct svg_node {
	uint32_t	 name;		/* string id; NONE: the root "all" */
	uint32_t	 depth;
	uint64_t	 start, count;	/* in samples (a differential graph:
					 * in shares of SVG_DIFF_SCALE) */
	uint64_t	 a, b;		/* a differential graph's counts */
};

/* What every frame is drawn against. */
struct svg_ctx {
	const struct svg_opts	*o;
	uint64_t		 total;		/* the root's width */
	double			 gw;		/* pixels */
	unsigned int		 height;
	uint64_t		 ta, tb;	/* a differential graph's sides */
	double			 maxd;		/* its largest change of share */
};

struct svg_layout {
	struct svg_node	*n;
	size_t		 nr, cap;
	uint64_t	 min;		/* samples a frame needs to be drawn */
	uint32_t	 depth;		/* the deepest drawn */
};

static int
svg_push(struct svg_layout *l, uint32_t name, uint32_t depth,
    uint64_t start, uint64_t end, uint64_t a, uint64_t b)
{
	struct svg_node	*tmp;

	if (end - start < l->min)
		return 0;
	if (l->nr == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		if ((tmp = realloc(l->n, l->cap * sizeof(*tmp))) == NULL)
			return -1;
		l->n = tmp;
	}
	l->n[l->nr].name = name;
	l->n[l->nr].depth = depth;
	l->n[l->nr].start = start;
	l->n[l->nr].count = end - start;
	l->n[l->nr].a = a;
	l->n[l->nr].b = b;
	l->nr++;
	if (depth > l->depth)
		l->depth = depth;
	return 0;
}

/* A stack's width: its samples, or in a differential graph its share
 * of its side (so that both sides weigh alike whatever their samples). */
static uint64_t
svg_weight(const struct svg_ctx *c, const struct stack *st)
{
	if (!c->o->diff)
		return st->count;
	return (uint64_t)((double)st->count * SVG_DIFF_SCALE /
	    (double)(st->key.pid == DIFF_B ? c->tb : c->ta) + 0.5);
}

/* Every frame of the sorted stacks: depth 0 is "all", a stack's frame k
 * is at depth k + 1. Each frame's samples of either side of a
 * differential graph are counted as its width is. */
static int
svg_layout(struct svg_layout *l, const struct stack **s, size_t n,
    const struct svg_ctx *c)
{
	uint32_t	 open[STACKSET_MAX_FRAMES + 8];	/* names */
	uint64_t	 since[STACKSET_MAX_FRAMES + 8];
	uint64_t	 sa[STACKSET_MAX_FRAMES + 8], sb[STACKSET_MAX_FRAMES + 8];
	uint32_t	 nopen = 0, p, k;
	uint64_t	 at = 0, ca = 0, cb = 0;
	size_t		 i;

	for (i = 0; i < n; i++) {
		/* the frames this stack shares with the open ones stay */
		for (p = 0; p < nopen && p < s[i]->nframes &&
		    open[p] == s[i]->frames[p]; p++)
			;
		while (nopen > p) {
			nopen--;
			if (svg_push(l, open[nopen], nopen + 1, since[nopen],
			    at, ca - sa[nopen], cb - sb[nopen]) == -1)
				return -1;
		}
		for (k = p; k < s[i]->nframes; k++) {
			open[k] = s[i]->frames[k];
			since[k] = at;
			sa[k] = ca;
			sb[k] = cb;
		}
		nopen = s[i]->nframes;
		at += svg_weight(c, s[i]);
		if (c->o->diff && s[i]->key.pid == DIFF_A)
			ca += s[i]->count;
		else
			cb += s[i]->count;
	}
	while (nopen > 0) {
		nopen--;
		if (svg_push(l, open[nopen], nopen + 1, since[nopen], at,
		    ca - sa[nopen], cb - sb[nopen]) == -1)
			return -1;
	}
	l->min = 0;
	return svg_push(l, STACKSET_NONE, 0, 0, at, ca, cb);
}

void
svg_escape(FILE *f, const char *s, size_t len)
{
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end = p + len;
	size_t			 need, i;

	while (p < end) {
		if (*p < 0x80) {
			switch (*p) {
			case '&':	fputs("&amp;", f);	break;
			case '<':	fputs("&lt;", f);	break;
			case '>':	fputs("&gt;", f);	break;
			case '"':	fputs("&quot;", f);	break;
			default:
				fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
			}
			p++;
			continue;
		}
		/* a whole, shortest-form UTF-8 character, or '?' */
		need = (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 :
		    (*p & 0xf8) == 0xf0 ? 4 : 0;
		if (need == 0 || (size_t)(end - p) < need || *p == 0xc0 ||
		    *p == 0xc1 || *p > 0xf4) {
			fputc('?', f);
			p++;
			continue;
		}
		for (i = 1; i < need; i++)
			if ((p[i] & 0xc0) != 0x80)
				break;
		if (i < need || (*p == 0xe0 && p[1] < 0xa0) ||
		    (*p == 0xf0 && p[1] < 0x90) ||
		    (*p == 0xf4 && p[1] > 0x8f) ||
		    (*p == 0xed && p[1] > 0x9f)) {
			fputc('?', f);
			p++;
			continue;
		}
		fwrite(p, 1, need, f);
		p += need;
	}
}

static uint32_t
svg_hash(const char *s)
{
	uint32_t	 h = 2166136261U;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619U;
	return h;
}

/* A frame's colour from h: user code warm (red to yellow), the kernel
 * blue, the roots (and [...]) grey; apart in hue, not only in shade, so
 * that a glance (and an eye weak on red and green) tells them apart. */
static void
svg_rgb(char *buf, size_t len, uint32_t h, enum stack_kind kind)
{
	unsigned int	 a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;

	switch (kind) {
	case STACK_KERNEL:
		snprintf(buf, len, "rgb(%u,%u,%u)", 60 + a * 50 / 255,
		    130 + b * 60 / 255, 200 + c * 50 / 255);
		break;
	case STACK_LABEL:
		snprintf(buf, len, "rgb(%u,%u,%u)", 185 + a * 30 / 255,
		    185 + a * 30 / 255, 190 + b * 30 / 255);
		break;
	case STACK_USER:
	default:
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + a * 50 / 255,
		    b * 230 / 255, c * 55 / 255);
		break;
	}
}

/* The same name gets the same colour in every graph. */
static void
svg_color(char *buf, size_t len, const char *name, enum stack_kind kind)
{
	svg_rgb(buf, len, svg_hash(name), kind);
}

/* A differential graph's colours: what changed from A to B. */
static void
svg_legend_diff(FILE *f, unsigned int width)
{
	static const struct {
		const char	*fill;
		const char	*what;
	} keys[] = {
		{ "rgb(255,45,45)", "grew (a larger share in B)" },
		{ "rgb(45,45,255)", "shrank" },
		{ "rgb(255,255,255)", "unchanged" },
	};
	unsigned int	 x = width / 2 - 150;
	size_t		 i;

	fputs("<g id=\"legend\">", f);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		fprintf(f, "<rect x=\"%u\" y=\"50\" width=\"12\" "
		    "height=\"12\" fill=\"%s\" stroke=\"#999\" rx=\"2\"/>"
		    "<text x=\"%u\" y=\"60\">%s</text>", x, keys[i].fill,
		    x + 16, keys[i].what);
		x += 16 + (unsigned int)(strlen(keys[i].what) * SVG_FONT *
		    SVG_CHAR_W) + 14;
	}
	fputs("</g>\n", f);
}

/* What the colours mean, in the middle of the buttons' row. */
static void
svg_legend(FILE *f, unsigned int width)
{
	static const struct {
		enum stack_kind	 kind;
		const char	*what;
	} keys[] = {
		{ STACK_USER, "user code" },
		{ STACK_KERNEL, "kernel" },
		{ STACK_LABEL, "roots, [...]" },
	};
	char		 color[32];
	unsigned int	 x = width / 2 - 130;
	size_t		 i;

	fputs("<g id=\"legend\">", f);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		svg_rgb(color, sizeof(color), 0x808080, keys[i].kind);
		fprintf(f, "<rect class=\"key%s\" x=\"%u\" y=\"50\" "
		    "width=\"12\" height=\"12\" fill=\"%s\" rx=\"2\"/>"
		    "<text x=\"%u\" y=\"60\">%s</text>", keys[i].kind ==
		    STACK_KERNEL ? " k" : keys[i].kind == STACK_LABEL ? " r" :
		    "", x, color, x + 16, keys[i].what);
		x += 16 + (unsigned int)(strlen(keys[i].what) * SVG_FONT *
		    SVG_CHAR_W) + 14;
	}
	fputs("</g>\n", f);
}

/* The label that fits w pixels: the name, cut with "..", or nothing. */
static size_t
svg_fit(const char *name, double w, int *cut)
{
	size_t	 chars = (size_t)((w - 6) / (SVG_FONT * SVG_CHAR_W));
	size_t	 n = strlen(name);

	*cut = 0;
	if (w < 6 || chars < 3)
		return 0;
	if (n <= chars)
		return n;
	if (chars - 2 < SVG_MIN_CUT)
		return 0;
	*cut = 1;
	n = chars - 2;
	/* not inside a UTF-8 character */
	while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* The change of a frame's share from A to B, in shares of 1. */
static double
svg_change(const struct svg_ctx *c, const struct svg_node *nd)
{
	return (c->tb ? (double)nd->b / (double)c->tb : 0) -
	    (c->ta ? (double)nd->a / (double)c->ta : 0);
}

/* A differential frame's colour: red as its share grew, blue as it
 * shrank, white unchanged, against the largest change in the graph. */
static void
svg_diff_color(char *buf, size_t len, const struct svg_ctx *c,
    const struct svg_node *nd)
{
	double		 d = svg_change(c, nd);
	unsigned int	 v;

	v = c->maxd > 0 ? (unsigned int)(210.0 * (d < 0 ? -d : d) / c->maxd +
	    0.5) : 0;
	if (d > 0)
		snprintf(buf, len, "rgb(255,%u,%u)", 255 - v, 255 - v);
	else
		snprintf(buf, len, "rgb(%u,%u,255)", 255 - v, 255 - v);
}

/* "N samples", or the time of N ns when the counts are times. */
static const char *
svg_amount(const struct svg_ctx *c, uint64_t n, char *buf, size_t len)
{
	if (c->o->time)
		return opts_ns(n, buf, len);
	snprintf(buf, len, "%" PRIu64 " samples", n);
	return buf;
}

/* " (A N samples P%, B M samples Q%, +R points[, only in B])" */
static void
svg_diff_title(FILE *f, const struct svg_ctx *c, const struct svg_node *nd)
{
	char	 a[40], b[40];

	fprintf(f, " (A %s %.2f%%, B %s %.2f%%, %+.2f points%s)",
	    svg_amount(c, nd->a, a, sizeof(a)), c->ta ? 100.0 *
	    (double)nd->a / (double)c->ta : 0.0,
	    svg_amount(c, nd->b, b, sizeof(b)), c->tb ? 100.0 *
	    (double)nd->b / (double)c->tb : 0.0, 100.0 * svg_change(c, nd),
	    nd->a == 0 ? ", only in B" : nd->b == 0 ? ", only in A" : "");
}

static void
svg_frame(FILE *f, const struct stackset *v, const struct svg_node *nd,
    const struct svg_ctx *c)
{
	const char	*name = nd->name == STACKSET_NONE ? "all" :
	    stackset_str(v, nd->name);
	enum stack_kind	 kind = nd->name == STACKSET_NONE ? STACK_LABEL :
	    stackset_kind(v, nd->name);
	double		 x = SVG_XPAD + (double)nd->start * c->gw /
	    (double)c->total;
	double		 w = (double)nd->count * c->gw / (double)c->total;
	double		 y = c->o->inverted ? SVG_TOP + (double)nd->depth *
	    SVG_FRAME_H : (double)c->height - SVG_BOTTOM - (double)(nd->depth +
	    1) * SVG_FRAME_H;
	const char	*only = !c->o->diff ? "" : nd->a == 0 ? " only-b" :
	    nd->b == 0 ? " only-a" : "";
	char		 color[32], amount[40];
	size_t		 fit;
	int		 cut;

	if (c->o->diff)
		svg_diff_color(color, sizeof(color), c, nd);
	else
		svg_color(color, sizeof(color), name, kind);
	fprintf(f, "<g class=\"f%s%s\" data-s=\"%" PRIu64 "\" data-n=\"%"
	    PRIu64 "\" data-d=\"%" PRIu32 "\"", kind == STACK_KERNEL ? " k" :
	    "", only, nd->start, nd->count, nd->depth);
	if (c->o->diff)
		fprintf(f, " data-a=\"%" PRIu64 "\" data-b=\"%" PRIu64 "\" "
		    "data-c=\"%.4f\"", nd->a, nd->b, 100.0 * svg_change(c, nd));
	fputs("><title>", f);
	svg_escape(f, name, strlen(name));
	if (c->o->diff)
		svg_diff_title(f, c, nd);
	else
		fprintf(f, " (%s, %.2f%%)", svg_amount(c, nd->count, amount,
		    sizeof(amount)), 100.0 * (double)nd->count /
		    (double)c->total);
	/* a frame of one side only: outlined, dashed */
	fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	    "height=\"%d\" fill=\"%s\" rx=\"2\"%s/><text x=\"%.1f\" "
	    "y=\"%.1f\">", x, y, w, SVG_FRAME_H - 1, color, only[0] ?
	    " stroke=\"#000\" stroke-width=\"1\" stroke-dasharray=\"3,2\"" :
	    "", x + 3, y + SVG_FRAME_H - 4.5);
	if ((fit = svg_fit(name, w, &cut)) > 0) {
		svg_escape(f, name, fit);
		if (cut)
			fputs("..", f);
	}
	fputs("</text></g>\n", f);
}

int
svg_write(FILE *f, const struct stackset *v, const struct svg_opts *o)
{
	struct svg_layout	  l;
	struct svg_ctx		  c;
	const struct stack	**s;
	uint64_t		  total = 0;
	double			  gw = (double)o->width - 2 * SVG_XPAD;
	unsigned int		  height;
	size_t			  i, n = stackset_nstacks(v);

	memset(&l, 0, sizeof(l));
	memset(&c, 0, sizeof(c));
	c.o = o;
	c.gw = gw;
	for (i = 0; i < n; i++) {
		if (o->diff && stackset_stack(v, i)->key.pid == DIFF_A)
			c.ta += stackset_stack(v, i)->count;
		else
			c.tb += stackset_stack(v, i)->count;
	}
	for (i = 0; i < n; i++)
		total += svg_weight(&c, stackset_stack(v, i));
	c.total = total;
	if ((s = view_sort(v)) == NULL)
		return -1;
	/* frames below SVG_MIN_PX pixels are not drawn */
	l.min = total > 0 ? (uint64_t)(SVG_MIN_PX * (double)total / gw) : 0;
	if (l.min == 0)
		l.min = 1;
	if (total > 0 && svg_layout(&l, s, n, &c) == -1) {
		free(s);
		free(l.n);
		errno = ENOMEM;
		return -1;
	}
	free(s);
	for (i = 0; o->diff && i < l.nr; i++) {
		if (svg_change(&c, &l.n[i]) > c.maxd)
			c.maxd = svg_change(&c, &l.n[i]);
		if (-svg_change(&c, &l.n[i]) > c.maxd)
			c.maxd = -svg_change(&c, &l.n[i]);
	}
	height = SVG_TOP + SVG_BOTTOM + (l.depth + 1) * SVG_FRAME_H + 8;
	c.height = height - 8;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
	    "onload=\"flameInit(evt)\" data-total=\"%" PRIu64 "\" "
	    "data-xpad=\"%d\" data-font=\"%d\" data-charw=\"%.2f\" "
	    "data-width=\"%u\" data-fit=\"%d\"",
	    o->width, height, o->width, height, total, SVG_XPAD, SVG_FONT,
	    SVG_CHAR_W, o->width, o->fit ? 1 : 0);
	if (o->diff)
		fprintf(f, " data-total-a=\"%" PRIu64 "\" data-total-b=\"%"
		    PRIu64 "\"", c.ta, c.tb);
	fputs(">\n", f);
	fprintf(f, "<!-- perfspill-flame: frames are as wide as their "
	    "samples; click to zoom, type in the search box -->\n");
	fputs("<style>\n"
	    "text { font-family: Verdana, Helvetica, sans-serif; "
	    "font-size: 12px; fill: #000; }\n"
	    "#title { font-size: 17px; text-anchor: middle; }\n"
	    "#subtitle { font-size: 12px; text-anchor: middle; fill: #444; }\n"
	    ".button { cursor: pointer; fill: #2a5db0; }\n"
	    ".button:hover { text-decoration: underline; }\n"
	    ".hide { display: none; }\n"
	    ".parent { opacity: 0.5; }\n"
	    "g.f { cursor: pointer; }\n"
	    "g.f:hover rect { stroke: #333; stroke-width: 0.5; }\n"
	    "g.f text { pointer-events: none; }\n"
	    "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n", f);
	for (i = 0; svg_js[i] != NULL; i++)
		fputs(svg_js[i], f);
	fprintf(f, "]]></script>\n"
	    "<rect id=\"bg\" x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
	    "fill=\"#f8f8f4\"/>\n<text id=\"title\" x=\"%u\" y=\"22\">",
	    o->width, height, o->width / 2);
	svg_escape(f, o->title, strlen(o->title));
	fprintf(f, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"40\">",
	    o->width / 2);
	svg_escape(f, o->subtitle, strlen(o->subtitle));
	fprintf(f, "</text>\n"
	    "<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"60\">"
	    "Reset zoom</text>\n"
	    "<text id=\"back\" class=\"button hide\" x=\"%d\" y=\"60\">"
	    "Back</text>\n"
	    "<foreignObject x=\"%u\" y=\"46\" width=\"230\" height=\"20\">"
	    "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" "
	    "type=\"search\" placeholder=\"Search (regex)\" style=\"width: "
	    "220px; font-size: 11px;\"/></foreignObject>\n"
	    "<text id=\"matched\" x=\"%u\" y=\"60\" "
	    "style=\"text-anchor: end\"> </text>\n"
	    "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
	    SVG_XPAD, SVG_XPAD + 90, o->width - SVG_XPAD - 230 - 120,
	    o->width - SVG_XPAD, SVG_XPAD, height - 10);
	if (o->diff)
		svg_legend_diff(f, o->width);
	else
		svg_legend(f, o->width);
	fputs("<g id=\"frames\">\n", f);
	/* the root first: the document order is the drawing order */
	for (i = l.nr; i > 0; i--)
		svg_frame(f, v, &l.n[i - 1], &c);
	fputs("</g>\n</svg>\n", f);
	free(l.n);
	return ferror(f) ? -1 : 0;
}
