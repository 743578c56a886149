/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keeper_proto.h - what keeper.c and the keeper (keeper_main.c) share. */
#ifndef VML_TARGET_KEEPER_PROTO_H
#define VML_TARGET_KEEPER_PROTO_H

#include <limits.h>

/* One record, at most: written with one write(), so atomically. */
#define KEEPER_MAX_RECORD PIPE_BUF

/* The keeper's entry point in vmalock-child (`vmalock-child --keeper`). */
int keeper_main(void);

#endif /* VML_TARGET_KEEPER_PROTO_H */
