/*
 * managed.c - the visible children of an object that manages its
 * descendants (ATSPI_STATE_MANAGES_DESCENDANTS: spreadsheets, tables, long
 * lists), for detm-a11y's walk.
 *
 * Such an object makes its children on demand and may claim any number:
 * LibreOffice Calc's sheet says 2^31-1. Walking them in index order spends
 * any budget in cells nobody sees, so only the ones whose area meets the
 * visible area are visited:
 *   - a table (AtspiTable with rows and columns): the headers of the
 *     columns in the area, then from the cell at the area's top-left
 *     corner (GetAccessibleAtPoint, its row and column), row by row, each
 *     row rightwards until a cell lies past the area's right edge or has
 *     no area, until a row shows nothing;
 *   - anything else: from the child at the top-left corner (else the
 *     first), in index order, while children show in the area.
 * At most `cap` children are visited and at most `cap` more looked at;
 * a small container (SMALL children) is visited whole.
 *
 * Does not: decide what is listed (walk.c visits each child like any node).
 */
#include "helper.h"

#define SMALL 64

struct mctx {
	AtspiAccessible *a;
	const struct wctx *c;
	const struct rect *area;
	int cap, visits, probes;
	void (*visit)(void *ctx, AtspiAccessible *child);
	bool (*stopped)(void *ctx);
	void *ctx;
};

/* The index of the child at the area's top-left corner, or -1. */
static gint
corner_index(const struct mctx *m)
{
	AtspiComponent *comp = atspi_accessible_get_component_iface(m->a);
	AtspiAccessible *k;
	gint idx = -1;

	if (comp == NULL)
		return -1;
	k = atspi_component_get_accessible_at_point(comp, m->area->x + 1 - m->c->dx, m->area->y + 1 - m->c->dy,
	    ATSPI_COORD_TYPE_SCREEN, NULL);
	g_object_unref(comp);
	if (k != NULL && k != m->a)
		idx = atspi_accessible_get_index_in_parent(k, NULL);
	if (k != NULL)
		g_object_unref(k);
	return idx;
}

/* One cell of row r: 1 visited, 0 not in the area (past its right edge,
 * or no area), -1 past its bottom edge, -2 a budget is spent. */
static int
table_cell(struct mctx *m, AtspiTable *t, gint r, gint col)
{
	AtspiAccessible *cell;
	struct rect cr;
	int rc = 0;

	if (m->visits >= m->cap || m->probes >= 2 * m->cap || m->stopped(m->ctx))
		return -2;
	m->probes++;
	cell = atspi_table_get_accessible_at(t, r, col, NULL);
	if (cell == NULL)
		return 0;
	if (!node_extents(cell, m->c, &cr) || cr.x >= (int64_t)m->area->x + m->area->w)
		rc = 0;
	else if (cr.y >= (int64_t)m->area->y + m->area->h)
		rc = -1;
	else if (rect_meets(&cr, m->area)) {
		m->visits++;
		m->visit(m->ctx, cell);
		rc = 1;
	}
	g_object_unref(cell);
	return rc;
}

/* The headers of columns c0.. (GTK's tree view buttons), while they are in
 * the area. */
static void
table_headers(struct mctx *m, AtspiTable *t, gint c0, gint cols)
{
	for (gint col = c0; col < cols && m->visits < m->cap && m->probes < 2 * m->cap && !m->stopped(m->ctx); col++) {
		AtspiAccessible *h = atspi_table_get_column_header(t, col, NULL);
		struct rect hr;
		bool in;

		m->probes++;
		if (h == NULL)
			return;
		in = node_extents(h, m->c, &hr) && hr.x < (int64_t)m->area->x + m->area->w;
		if (in && rect_meets(&hr, m->area)) {
			m->visits++;
			m->visit(m->ctx, h);
		}
		g_object_unref(h);
		if (!in)
			return;
	}
}

static bool
table_walk(struct mctx *m, AtspiTable *t, gint rows, gint cols)
{
	gint idx = corner_index(m), r0 = -1, c0 = -1;

	if (idx >= 0) {
		r0 = atspi_table_get_row_at_index(t, idx, NULL);
		c0 = atspi_table_get_column_at_index(t, idx, NULL);
	}
	/* the corner is a header (or nothing a row holds): from the first cell */
	r0 = r0 < 0 ? 0 : r0;
	c0 = c0 < 0 ? 0 : c0;
	table_headers(m, t, c0, cols);
	for (gint r = r0; r < rows; r++) {
		bool any = false;

		for (gint col = c0; col < cols; col++) {
			int got = table_cell(m, t, r, col);

			if (got == -2)
				return m->stopped(m->ctx);
			if (got == -1)
				return true;
			if (got == 0)
				break;          /* past the right edge */
			any = true;
		}
		if (!any)
			return true;    /* a row with nothing in the area: below it */
	}
	return true;
}

static bool
list_walk(struct mctx *m, gint n)
{
	gint start = corner_index(m);
	bool seen = false;

	for (gint i = start > 0 ? start : 0; i < n; i++) {
		AtspiAccessible *k;
		struct rect kr;
		bool in;

		if (m->visits >= m->cap || m->probes >= 2 * m->cap || m->stopped(m->ctx))
			return m->stopped(m->ctx);
		m->probes++;
		k = atspi_accessible_get_child_at_index(m->a, i, NULL);
		if (k == NULL)
			continue;
		in = wctx_shows(m->c, k, node_flags(k, NULL)) && node_extents(k, m->c, &kr) && rect_meets(&kr, m->area);
		if (in) {
			m->visits++;
			m->visit(m->ctx, k);
		}
		g_object_unref(k);
		if (!in && seen)
			return true;    /* the end of the visible run */
		seen = seen || in;
	}
	return true;
}

bool
managed_children(AtspiAccessible *a, const struct wctx *c, const struct rect *area, int cap,
    void (*visit)(void *ctx, AtspiAccessible *child), bool (*stopped)(void *ctx), void *ctx)
{
	struct mctx m = { a, c, area, cap, 0, 0, visit, stopped, ctx };
	gint n = atspi_accessible_get_child_count(a, NULL);
	AtspiTable *t;
	bool done;

	if (n <= SMALL) {
		for (gint i = 0; i < n && !stopped(ctx); i++) {
			AtspiAccessible *k = atspi_accessible_get_child_at_index(a, i, NULL);

			if (k != NULL) {
				visit(ctx, k);
				g_object_unref(k);
			}
		}
		return true;
	}
	t = atspi_accessible_get_table_iface(a);
	if (t != NULL) {
		gint rows = atspi_table_get_n_rows(t, NULL), cols = atspi_table_get_n_columns(t, NULL);

		done = rows > 0 && cols > 0 ? table_walk(&m, t, rows, cols) : list_walk(&m, n);
		g_object_unref(t);
		return done;
	}
	return list_walk(&m, n);
}
