/* contact_law.c - node-node contact's law for one contact, and its group filter: what
 * node pairs (contact.c) and segment pairs (segment_contact.c) share. The law itself, its
 * stiffness from the step and its calibrated dashpot are explained in contact.c ("The
 * law" and "The restitution of the law from the step"). */
#include "springsim.h"

#include <math.h>
#include <string.h>

static uint64_t group_key(int32_t a, int32_t b) {
    const uint32_t lo = (uint32_t)(a < b ? a : b), hi = (uint32_t)(a < b ? b : a);
    return (uint64_t)lo << 32 | hi;
}

/* Index of the first key >= key in the sorted filter. */
static size_t filter_find(const ss_contact *t, uint64_t key) {
    size_t lo = 0, hi = t->num_off;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (t->off[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int ss_contact_enabled(const ss_contact *t, int32_t a, int32_t b) {
    if (!t->num_off)
        return 1;
    const uint64_t key = group_key(a, b);
    const size_t k = filter_find(t, key);
    return !(k < t->num_off && t->off[k] == key);
}

ss_status ss_contact_set_filter(ss_system *sys, int32_t a, int32_t b, int enabled) {
    ss_contact *t = sys->contact;
    const uint64_t key = group_key(a, b);
    const size_t k = filter_find(t, key);
    const int present = k < t->num_off && t->off[k] == key;
    if (enabled && present) {
        memmove(t->off + k, t->off + k + 1, (t->num_off - k - 1) * sizeof *t->off);
        t->num_off--;
    } else if (!enabled && !present) {
        if (t->num_off == t->off_capacity) {
            const size_t capacity = t->off_capacity ? 2 * t->off_capacity : 8;
            uint64_t *fresh = ss_malloc(capacity * sizeof *fresh);
            if (!fresh)
                return ss_fail(sys, SS_ERR_NOMEM, "out of memory for the contact filter");
            if (t->num_off)
                memcpy(fresh, t->off, t->num_off * sizeof *fresh);
            ss_free(t->off);
            t->off = fresh;
            t->off_capacity = capacity;
        }
        memmove(t->off + k + 1, t->off + k, (t->num_off - k) * sizeof *t->off);
        t->off[k] = key;
        t->num_off++;
    }
    sys->state_edits++;
    return SS_OK;
}

/* k_c of the user, or m_eff (w_c dt / dt)^2 from the step (contact.c, "The law"). */
double ss_contact_pair_stiffness(const ss_contact *t, double m_eff, double dt) {
    if (t->stiffness != SS_CONTACT_FROM_STEP)
        return t->stiffness;
    if (!(dt > 0.0))
        return 0.0; /* no step yet: no stiffness */
    const double w = t->omega_dt / dt;
    return m_eff * w * w;
}

/* F = (k delta + clip(-c v_n)) n - min(gamma |v_t|, mu |F_n|) v_t / |v_t| (contact.c,
 * "The law"): the textbook dashpot c = 2 zeta sqrt(k m_eff) for the user's k_c; for the
 * law from the step the call's calibrated zeta, its force capped at SS_CONTACT_DAMPER_CAP
 * times the spring's. */
double ss_contact_law(const ss_contact *t, size_t dim, double delta, const double n[3],
                      const double vrel[3], double k, double m_eff, double force[3]) {
    const double root = sqrt(k * m_eff);
    const double c = 2.0 * t->zeta * root;
    double vn = 0.0, power;
    for (size_t w = 0; w < dim; w++)
        vn += vrel[w] * n[w];
    double fn = k * delta - c * vn;
    power = c * vn * vn;
    if (t->stiffness == SS_CONTACT_FROM_STEP) {
        /* the step's calibrated dashpot, never beyond the spring (see "The restitution
         * of the law from the step") */
        const double spring = k * delta, cap = SS_CONTACT_DAMPER_CAP * spring;
        double damper = -2.0 * t->step_zeta * root * vn;
        damper = damper > cap ? cap : damper < -cap ? -cap : damper;
        fn = spring + damper;
        power = -damper * vn;
    }
    for (size_t w = 0; w < dim; w++)
        force[w] = fn * n[w];
    if (t->friction > 0.0) {
        double vt[3], speed2 = 0.0;
        for (size_t w = 0; w < dim; w++) {
            vt[w] = vrel[w] - vn * n[w];
            speed2 += vt[w] * vt[w];
        }
        const double speed = sqrt(speed2);
        if (speed > 0.0) {
            const double viscous = 2.0 * root * speed, cap = t->friction * fabs(fn);
            const double ft = viscous < cap ? viscous : cap;
            for (size_t w = 0; w < dim; w++)
                force[w] -= ft * vt[w] / speed;
            power += ft * speed;
        }
    }
    return power;
}
