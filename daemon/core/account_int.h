/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What account.c asks of the busy back-off (account_busy.c).  Not part of
 * the API: include account.h.
 */
#ifndef TIERD_CORE_ACCOUNT_INT_H
#define TIERD_CORE_ACCOUNT_INT_H

#include <stdint.h>

#include "account.h"

/* 0, or -EINVAL for busy_slots that are not 0 or a power of two
 * >= ACCT_BUSY_WAYS; -ENOMEM. */
int acct_busy_new(struct account *a);

/*
 * @it was busy at @now_ns: back it off.  Returns when it is to be tried
 * again, 0 when it is not remembered (busy_slots 0).
 */
uint64_t acct_busy_mark(struct account *a, const struct policy_intent *it, uint64_t now_ns);

/* The page at @addr of @pid moved or is gone: forget its back-off. */
void acct_busy_forget(struct account *a, int pid, uint64_t addr, uint64_t now_ns);

#endif
