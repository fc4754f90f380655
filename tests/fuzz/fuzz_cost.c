/* fuzz_cost.c - libFuzzer target: the cost API. Input: byte 0 picks a chip, then a mesh text ("4x4", read
   by gs_cost_parse_dims) up to a newline, then an HLO module costed on that topology (gs_cost_program, text
   and JSON reports); 48 bytes after the chip byte also feed the closed-form formulas as integers and doubles.
   Every call returns GS_OK with finite, non-negative times, or an error with a message.
   Build and run: make fuzz-libfuzzer. */
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void outcome(gs_ctx *ctx, gs_result r, double t) {
    if (r == GS_OK) {
        if (!(t >= 0) || isnan(t)) abort();   /* a time is never negative or NaN (HUGE_VAL may mean "never") */
    } else if (!gs_ctx_error_msg(ctx)[0]) {
        abort();
    }
    gs_ctx_clear_error(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gs_ctx *ctx = NULL;
    const gs_chip *chip;
    int64_t iv[6];
    double dv[6];
    size_t i, nl;
    char mesh[64];
    if (size < 1 || size > 8192) return 0;
    if (gs_ctx_create(NULL, &ctx) != GS_OK) abort();
    chip = gs_chip_at(data[0] % gs_chip_count());
    memset(iv, 0, sizeof iv);
    memset(dv, 0, sizeof dv);
    for (i = 0; i < 6 && 1 + 8 * (i + 1) <= size; i++) {
        memcpy(&iv[i], data + 1 + 8 * i, 8);
        dv[i] = (double)(iv[i] % 1000000) * (iv[i] & 1 ? 1e-3 : 1e3);
    }
    {
        gs_roofline rl;
        gs_cost_comm cm;
        gs_mlp_desc md;
        gs_mlp_cost mc;
        gs_cost_axis ax[3];
        double x;
        int k;
        outcome(ctx, gs_cost_roofline(ctx, dv[0], dv[1], dv[2], dv[3], &rl), rl.t_lower);
        outcome(ctx, gs_cost_matmul(ctx, chip, iv[0] % 100000, iv[1] % 100000, iv[2] % 100000, dv[3], dv[4], dv[5],
                                    (gs_math)(data[0] % 3), &rl), rl.t_upper);
        outcome(ctx, gs_cost_critical_batch(ctx, chip, dv[0], (gs_math)(data[0] % 3), &x), x);
        outcome(ctx, gs_cost_breakeven_batch(ctx, chip, iv[0], iv[1], dv[2], dv[3], dv[4], (gs_math)(data[0] % 3), &x), x);
        outcome(ctx, gs_cost_p2p(ctx, chip, dv[0], iv[1] % 1000, (int)(iv[2] % 8), &cm), cm.seconds);
        outcome(ctx, gs_cost_pcie(ctx, chip, dv[0], iv[1], &cm), cm.seconds);
        outcome(ctx, gs_cost_dcn(ctx, chip, dv[0], iv[1], &cm), cm.seconds);
        memset(ax, 0, sizeof ax);
        for (k = 0; k < 3; k++) {
            ax[k].size = iv[3 + k] % 64;
            ax[k].ring = (gs_ring_kind)((iv[3 + k] >> 8) % 4);
        }
        outcome(ctx, gs_cost_collective(ctx, chip, (gs_collective_kind)(data[0] % 7), dv[0], (int)(iv[2] % 5), ax, &cm),
                cm.seconds);
        memset(&md, 0, sizeof md);
        md.batch = iv[0];
        md.d_model = iv[1];
        md.d_ff = iv[2];
        md.x = iv[3] % 4096;
        md.y = iv[4] % 4096;
        md.axes_x = (int)(iv[5] % 4);
        md.axes_y = (int)((iv[5] >> 8) % 4);
        outcome(ctx, gs_cost_mlp(ctx, chip, (gs_parallelism)(data[0] % 6), &md, &mc), mc.t_math + mc.t_comms);
    }
    for (nl = 1; nl < size && data[nl] != '\n'; nl++) {}
    if (nl < size && nl - 1 < sizeof mesh) {
        gs_topology_desc td;
        gs_topology *topo = NULL;
        gs_graph *g = NULL;
        gs_cost_report *rep = NULL;
        int rank = 0;
        memcpy(mesh, data + 1, nl - 1);
        mesh[nl - 1] = 0;
        memset(&td, 0, sizeof td);
        td.chip = chip;
        if (gs_cost_parse_dims(ctx, mesh, &rank, td.mesh) != GS_OK) {
            outcome(ctx, GS_ERR_INVALID_ARG, 0);
        } else {
            td.mesh_rank = rank;
            if (gs_topology_create(ctx, &td, &topo) != GS_OK) {
                outcome(ctx, GS_ERR_INVALID_ARG, 0);
            } else if (gs_hlo_parse(ctx, (const char *)data + nl + 1, size - nl - 1, &g) == GS_OK) {
                if (gs_cost_program(g, topo, &rep) == GS_OK) {
                    if (!gs_cost_report_text(rep) || !gs_cost_report_json(rep)) outcome(ctx, GS_ERR_INVALID_ARG, 0);
                    outcome(ctx, GS_OK, gs_cost_report_totals(rep).seconds_serial);
                } else {
                    outcome(ctx, GS_ERR_INVALID_ARG, 0);
                }
            }
        }
    }
    gs_ctx_destroy(ctx);
    return 0;
}
