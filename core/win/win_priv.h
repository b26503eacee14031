/* SPDX-License-Identifier: MIT */
/* core/win/win_priv.h - what the window's files share. */
#ifndef DVX_CORE_WIN_PRIV_H
#define DVX_CORE_WIN_PRIV_H

#include <dvx/win/win.h>

/* the CPU reaches the window's words (DVX_WIN_F_CPU, or a rank without a GPU) */
int dvx_win_cpu(const struct dvx_win *w);

/* the CPU reaches the word at @p (in the IB region with DVX_WIN_F_IB_HOST too) */
int dvx_win_cpu_at(const struct dvx_win *w, const void *p);

#endif
