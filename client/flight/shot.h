/* SPDX-License-Identifier: BSD-3-Clause */
/* One recording of `record --trigger`: a file per firing (created by the
 * watcher, named after the program and the time), holding the header,
 * the definitions the ring let go, the ring's blocks (the time before),
 * then the blocks that come until --after has passed: an eventlog that
 * parses, ending with the program's end marker when it came, else with a
 * cut notice saying why it ends there. Written through the whole-block
 * writer (client/source/blocks.h), so a full disk leaves a valid file
 * too. The watcher's loop thread. */
#ifndef ES_SHOT_H
#define ES_SHOT_H

#include "ring.h"
#include "source/blocks.h"

#include <stdbool.h>
#include <stdint.h>

struct es_shot {
    struct es_blocks b;
    char path[700];
    uint64_t off;        /* the file's length so far (the writer's stream offset) */
    uint64_t until;      /* program time: later blocks are not written */
    uint64_t from, last; /* the program time its blocks cover */
    uint64_t stream_end; /* the stream offset where its last block ends */
    bool open;
};

/* Write the ring into the file `fd` (named `path`), which the shot owns
 * from now on (es_shot_end closes it); it takes blocks until program time
 * `until`. Returns 0, or -errno (then end it too). */
int es_shot_begin(struct es_shot *s, int fd, const char *path, const struct es_ring *r,
                  uint64_t until);

/* A block made whole after the firing: written, unless it begins at or
 * after `until`. Returns 1 when the shot is over (that block began past
 * it), 0 when it goes on, or -errno. */
int es_shot_block(struct es_shot *s, const struct es_ring_block *b);

/* The end: with the program's end marker (`complete`: the stream's ends
 * at stream offset `end`, inside the last block written on GHC 9.2+,
 * after it on 9.0), else with a cut notice saying `why`; the file is
 * closed. Returns 0 or -errno. */
int es_shot_end(struct es_shot *s, const struct es_header *hdr, bool complete, uint64_t end,
                const char *why);

#endif
