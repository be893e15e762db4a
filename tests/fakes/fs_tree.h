/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Writable copies of fixture trees, for tests that change what tierd reads
 * under its root (a node's free memory) between ticks.
 */
#ifndef TIERD_FAKE_FS_TREE_H
#define TIERD_FAKE_FS_TREE_H

/*
 * Copy the tree @src into a new directory made from @tmpl (a mkdtemp(3)
 * template, rewritten with the name).  Returns 0 or -errno.
 */
int fs_tree_copy(const char *src, char *tmpl);

/* Write @text to the file @rel below @root, making its directories.
 * Returns 0 or -errno. */
int fs_tree_put(const char *root, const char *rel, const char *text);

/* Remove @root and everything below it. */
void fs_tree_remove(const char *root);

#endif
