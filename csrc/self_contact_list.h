/* self_contact_list.h - kernel-private: what self_contact.c shares with its broad phase
 * (self_contact_list.c). Not part of the kernel API. */
#ifndef SPRINGSIM_SELF_CONTACT_LIST_H
#define SPRINGSIM_SELF_CONTACT_LIST_H

#include "springsim.h"

struct ss_self_contact {
    double thickness, stiffness, friction, margin;
    size_t crossings;
    /* The candidate list: valid for the topology and node positions it was built at. */
    int valid;
    size_t built_edits, built_nodes, built_faces;
    int32_t *pairs; /* (count, 2) node, triangle */
    size_t count, pair_capacity;
    double *built_x;        /* (N, 3) positions at the build */
    size_t *buckets;        /* (num_buckets + 1,) counting sort's offsets */
    size_t *bucket_of_node; /* (N,) each node's bucket, computed once per build */
    size_t bucket_of_node_capacity;
    int32_t *sorted;  /* (N,) nodes by bucket */
    double *sorted_x; /* (3, N) their positions, in that order */
    size_t sorted_x_capacity;
    int32_t *hits; /* (N,) a scan's nodes inside a triangle's grown box */
    size_t hits_capacity;
    double *seen_x; /* (N, 3) positions at the last crossing check */
    /* (F, 3): for each triangle's edge k (from corner k to k + 1), the far vertex of the
     * other triangle on that edge, or -1; built with the list when the topology changed. */
    int32_t *opposite;
    size_t opposite_capacity, opposite_edits, opposite_faces;
    int opposite_valid;
    size_t built_capacity, sorted_capacity, seen_capacity, bucket_capacity; /* elements */
    int seen_valid; /* seen_x holds them (0: no check yet, or rolled back since) */
    /* The threads' scratch: per candidate, its force F on the node and the weights w
     * (6 doubles), and whether it touches; filled for the list of the last search. */
    double *results;
    uint8_t *touching;
    size_t results_capacity, touching_capacity;
    int search_failed; /* the last ss_self_contact_search ran out of memory */
};

/* Grow-only: *p to hold `need` elements of `size` bytes, keeping none of the old (its
 * capacity in elements in *capacity); -1 when out of memory. */
int ss_self_contact_reserve(void **p, size_t *capacity, size_t need, size_t size);
/* Make the candidate list valid for positions x: 0, or -1 when out of memory. */
int ss_self_contact_refresh(ss_self_contact *sc, const ss_system *sys, const double *x);
/* Nonzero when sc's list is valid for positions x as it is (refresh would keep it). */
int ss_self_contact_fits(const ss_self_contact *sc, const ss_system *sys, const double *x);
/* A query's list: *own (zeroed here) gets step's settings and the list at x, built in
 * memory of its own (the step's triangle neighbours only read, when current); no
 * crossing is counted. 0, or -1 when out of memory; release *own after either. */
int ss_self_contact_query_list(ss_self_contact *own, const ss_self_contact *step,
                               const ss_system *sys, const double *x);
/* Free every buffer sc holds (not sc itself). */
void ss_self_contact_release(ss_self_contact *sc);
/* Count the list's nodes that went through a triangle between the last check and x;
 * x becomes the last check. */
void ss_self_contact_count_crossings(ss_self_contact *sc, const ss_system *sys, const double *x);
/* The closest point of triangle (a, b, c) to p as barycentric weights w. */
void ss_closest_weights(const double *p, const double *a, const double *b, const double *c,
                        double w[3]);

#endif
