/* plan.c - how the springs are split among threads: blocks of nodes, each block's
 * interior springs as runs of consecutive indices, and the springs between blocks
 * (see ss_plan in springsim.h).
 *
 * The plan depends on the system alone (never on the thread count), so the order in
 * which a node sums its springs, and the rounding, is the same for 1 thread or many.
 * Builders number springs node by node, so a block's interior springs come in long
 * runs and the plan is a few hundred bytes; only the between-block springs (a few
 * per cent of a large cloth) cost memory of their own. */
#include "springsim.h"

#include <string.h>

/* Below this many springs a system is one block: the plain index order. */
#define SS_PLAN_MIN_SPRINGS 8192
/* Blocks per 2^17 springs, at least 4 (so 2 to 4 threads share the work evenly) and at
 * most 64 (so few springs lie between blocks). */
#define SS_PLAN_SPRINGS_PER_BLOCK 131072
#define SS_PLAN_MIN_BLOCKS 4
#define SS_PLAN_MAX_BLOCKS 64

void ss_plan_free(ss_plan *plan) {
    if (!plan)
        return;
    ss_free(plan->node_start);
    ss_free(plan->run_start);
    ss_free(plan->runs);
    ss_free(plan->cross);
    ss_free(plan->cross_forces);
    ss_free(plan->forces);
    ss_free(plan->block_probe);
    ss_free(plan->inv_mass);
    ss_free(plan->end_node);
    ss_free(plan->end_entry);
    ss_free(plan->end_start);
    ss_free(plan);
}

void ss_plan_refresh_masses(ss_system *sys) {
    if (!sys->scratch.plan)
        return;
    const double *mass = SS_DOUBLES(sys, SS_MASSES);
    for (size_t i = 0; i < sys->num_nodes; i++)
        sys->scratch.plan->inv_mass[i] = 1.0 / mass[i]; /* the same division the node pass made */
}

/* The sizes ss_system_ensure_plan allocates, block by block. */
size_t ss_plan_nbytes(const ss_plan *plan) {
    if (!plan)
        return 0;
    const size_t blocks = plan->num_blocks, n = plan->num_nodes;
    const size_t runs = plan->run_start[blocks], cross = plan->num_cross ? plan->num_cross : 1;
    return sizeof *plan + (n * plan->stride + SS_PAD_DOUBLES) * sizeof(double) +
           blocks * sizeof(double) + (n ? n : 1) * sizeof(double) +
           3 * (blocks + 1) * sizeof(size_t) + (runs ? 2 * runs : 1) * sizeof(size_t) +
           cross * (sizeof(int32_t) + plan->stride * sizeof(double) + 4 * sizeof(int32_t));
}

static size_t blocks_for(const ss_system *sys) {
    if (sys->num_springs < SS_PLAN_MIN_SPRINGS || sys->num_nodes < 2 * SS_PLAN_MIN_BLOCKS)
        return 1;
    size_t blocks = sys->num_springs / SS_PLAN_SPRINGS_PER_BLOCK;
    return blocks < SS_PLAN_MIN_BLOCKS   ? SS_PLAN_MIN_BLOCKS
           : blocks > SS_PLAN_MAX_BLOCKS ? SS_PLAN_MAX_BLOCKS
                                         : blocks;
}

/* The block of node i: node_start[b] <= i < node_start[b + 1]. */
static size_t block_of(const ss_plan *plan, size_t n, size_t i) {
    size_t b = (size_t)((uint64_t)i * plan->num_blocks / n);
    while (b + 1 < plan->num_blocks && plan->node_start[b + 1] <= i)
        b++;
    while (b > 0 && plan->node_start[b] > i)
        b--;
    return b;
}

/* A spring between blocks, in classify's marks (blocks are numbered below it). */
#define SS_PLAN_CROSS 255

/* Fill block (one byte per spring: its block, or SS_PLAN_CROSS); count the runs per
 * block into run_count and return the number of springs between blocks. */
static size_t classify(const ss_system *sys, const ss_plan *plan, uint8_t *block,
                       size_t *run_count) {
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    const size_t n = sys->num_nodes, m = sys->num_springs;
    size_t cross = 0;
    for (size_t s = 0; s < m; s++) {
        const size_t bi = block_of(plan, n, (size_t)pairs[2 * s]);
        const size_t bj = block_of(plan, n, (size_t)pairs[2 * s + 1]);
        block[s] = bi == bj ? (uint8_t)bi : SS_PLAN_CROSS;
        if (bi != bj)
            cross++;
        else if (s == 0 || block[s - 1] != bi)
            run_count[bi]++;
    }
    return cross;
}

ss_status ss_system_ensure_plan(ss_system *sys) {
    if (sys->scratch.plan && sys->scratch.plan->num_nodes == sys->num_nodes)
        return SS_OK;
    ss_plan_free(sys->scratch.plan); /* (every topology edit drops it; this is a safety net) */
    sys->scratch.plan = NULL;
    const size_t n = sys->num_nodes, m = sys->num_springs, stride = ss_force_stride(sys->dim);
    uint8_t *block = NULL; /* a byte per spring: the build's largest scratch */
    size_t *per_node = NULL;
    ss_plan *plan = ss_malloc(sizeof *plan);
    if (!plan)
        goto nomem;
    memset(plan, 0, sizeof *plan); /* every pointer NULL: ss_plan_free can run at once */
    block = ss_malloc((m ? m : 1) * sizeof *block);
    if (!block)
        goto nomem;
    const size_t blocks = blocks_for(sys);
    plan->num_blocks = blocks;
    plan->num_nodes = n;
    plan->stride = stride;
    plan->forces = ss_malloc((n * stride + SS_PAD_DOUBLES) * sizeof(double));
    plan->block_probe = ss_malloc(blocks * sizeof(double));
    plan->inv_mass = ss_malloc((n ? n : 1) * sizeof(double));
    plan->node_start = ss_malloc((blocks + 1) * sizeof(size_t));
    plan->run_start = ss_malloc((blocks + 1) * sizeof(size_t));
    plan->end_start = ss_malloc((blocks + 1) * sizeof(size_t));
    if (!plan->node_start || !plan->run_start || !plan->end_start || !plan->forces ||
        !plan->block_probe || !plan->inv_mass)
        goto nomem;
    for (size_t b = 0; b <= blocks; b++)
        plan->node_start[b] = n * b / blocks;

    size_t run_count[SS_PLAN_MAX_BLOCKS + 1] = {0};
    const size_t cross = classify(sys, plan, block, run_count);
    plan->run_start[0] = 0;
    for (size_t b = 0; b < blocks; b++)
        plan->run_start[b + 1] = plan->run_start[b] + run_count[b];
    const size_t runs = plan->run_start[blocks], alloc_cross = cross ? cross : 1;
    plan->runs = ss_malloc((runs ? 2 * runs : 1) * sizeof(size_t));
    plan->cross = ss_malloc(alloc_cross * sizeof(int32_t));
    plan->cross_forces = ss_malloc(alloc_cross * stride * sizeof(double));
    plan->end_node = ss_malloc(2 * alloc_cross * sizeof(int32_t));
    plan->end_entry = ss_malloc(2 * alloc_cross * sizeof(int32_t));
    if (!plan->runs || !plan->cross || !plan->cross_forces || !plan->end_node || !plan->end_entry)
        goto nomem;

    /* Runs, block by block in index order; the springs between blocks in index order. */
    size_t fill[SS_PLAN_MAX_BLOCKS + 1];
    memcpy(fill, plan->run_start, blocks * sizeof(size_t));
    plan->num_cross = 0;
    for (size_t s = 0; s < m; s++) {
        const size_t b = block[s];
        if (b == SS_PLAN_CROSS) {
            plan->cross[plan->num_cross++] = (int32_t)s;
        } else if (s > 0 && block[s - 1] == b) {
            plan->runs[2 * (fill[b] - 1) + 1] = s + 1; /* extend the open run */
        } else {
            plan->runs[2 * fill[b]] = s;
            plan->runs[2 * fill[b] + 1] = s + 1;
            fill[b]++;
        }
    }

    /* The ends of the between-block springs, grouped by block, within a block by node,
     * and for one node in spring order: a counting sort by node (stable). */
    ss_free(block);
    block = NULL;
    per_node = ss_malloc((n + 1) * sizeof(size_t));
    if (!per_node)
        goto nomem;
    memset(per_node, 0, (n + 1) * sizeof(size_t));
    const int32_t *pairs = SS_INT32S(sys, SS_SPRINGS);
    for (size_t q = 0; q < cross; q++) {
        const size_t s = (size_t)plan->cross[q];
        per_node[pairs[2 * s] + 1]++;
        per_node[pairs[2 * s + 1] + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        per_node[i + 1] += per_node[i];
    for (size_t b = 0; b <= blocks; b++)
        plan->end_start[b] = per_node[plan->node_start[b]];
    for (size_t q = 0; q < cross; q++) {
        const size_t s = (size_t)plan->cross[q];
        const int32_t i = pairs[2 * s], j = pairs[2 * s + 1];
        plan->end_node[per_node[i]] = i;
        plan->end_entry[per_node[i]++] = (int32_t)q;
        plan->end_node[per_node[j]] = j;
        plan->end_entry[per_node[j]++] = ~(int32_t)q;
    }
    ss_free(per_node);
    sys->scratch.plan = plan;
    ss_plan_refresh_masses(sys);
    return SS_OK;

nomem:
    ss_free(block);
    ss_free(per_node);
    ss_plan_free(plan);
    return ss_fail(sys, SS_ERR_NOMEM, "out of memory planning %zu springs for threads", m);
}
