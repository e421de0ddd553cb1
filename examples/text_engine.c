/*
 * A complete Cirulla engine in C for the text engine protocol (docs/text-protocol.md).
 *
 * Build: gcc -O2 -Wall -o text_engine text_engine.c
 * Play:  cirulla bot text -- ./text_engine
 * Check: cirulla bot check 'text:./text_engine'
 *
 * It needs no rules code: at each genmove it reads the numbered legal actions and picks
 * one: a declaration first, then a capture that takes the settebello (7D), then the
 * capture of the most cards, else it drops the first card offered. Every other game
 * command is acknowledged; the state line is kept only to show how to read it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 65536

static char state[LINE_MAX_LEN];
static int my_seat = -1;

static void answer(const char *id, const char *text) {
    printf("=%s%s%s\n\n", id, *text ? " " : "", text);
    fflush(stdout);
}

static void fail(const char *id, const char *message) {
    printf("?%s %s\n\n", id, message);
    fflush(stdout);
}

/* How much an action in the notation is worth to this simple engine. */
static int worth(const char *action) {
    int score = 0;
    if (strncmp(action, "low", 3) == 0 || strncmp(action, "three", 5) == 0) score += 1000;
    const char *play = strrchr(action, ' ');
    play = play ? play + 1 : action;
    const char *captures = strchr(play, ':');
    if (captures) {
        if (strstr(captures, "7D")) score += 100;
        score += 10; /* one captured card, plus one per '+' */
        for (const char *p = captures; *p; p++)
            if (*p == '+') score += 10;
    }
    return score;
}

static void genmove(const char *id, char *args) {
    /* args: "MS ACTION;ACTION;..." */
    char *actions = strchr(args, ' ');
    if (!actions) {
        fail(id, "genmove needs milliseconds and the legal actions");
        return;
    }
    actions++;
    int best = 0, best_score = -1, index = 0;
    char *saveptr = NULL;
    for (char *a = strtok_r(actions, ";", &saveptr); a; a = strtok_r(NULL, ";", &saveptr)) {
        int score = worth(a);
        if (score > best_score) {
            best_score = score;
            best = index;
        }
        index++;
    }
    if (index == 0) {
        fail(id, "no legal actions given");
        return;
    }
    char text[32];
    snprintf(text, sizeof text, "%d", best);
    answer(id, text);
}

int main(void) {
    static char line[LINE_MAX_LEN];
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n#")] = '\0';
        char *p = line;
        while (*p == ' ') p++;
        if (!*p) continue;
        char id[24] = "";
        if (*p >= '0' && *p <= '9') {
            size_t n = strspn(p, "0123456789");
            if (n >= sizeof id) n = sizeof id - 1;
            memcpy(id, p, n);
            id[n] = '\0';
            p += strspn(p, "0123456789");
            while (*p == ' ') p++;
        }
        char *args = strchr(p, ' ');
        if (args) *args++ = '\0'; else args = p + strlen(p);
        if (!strcmp(p, "protocol_version")) answer(id, "1");
        else if (!strcmp(p, "name")) answer(id, "c-example");
        else if (!strcmp(p, "version")) answer(id, "1.0");
        else if (!strcmp(p, "known_command")) {
            static const char *known[] = {"protocol_version", "name", "version",
                "known_command", "list_commands", "quit", "rules", "newgame", "event",
                "hand", "state", "genmove", NULL};
            const char *yes = "false";
            for (int i = 0; known[i]; i++)
                if (!strcmp(args, known[i])) yes = "true";
            answer(id, yes);
        } else if (!strcmp(p, "list_commands"))
            answer(id, "protocol_version\nname\nversion\nknown_command\nlist_commands\nquit\n"
                       "rules\nnewgame\nevent\nhand\nstate\ngenmove");
        else if (!strcmp(p, "quit")) {
            answer(id, "");
            return 0;
        } else if (!strcmp(p, "newgame")) {
            const char *seat = strstr(args, "seat=");
            my_seat = seat ? atoi(seat + 5) : -1;
            fprintf(stderr, "new game, I am seat %d\n", my_seat);
            answer(id, "");
        } else if (!strcmp(p, "state")) {
            snprintf(state, sizeof state, "%s", args);
            answer(id, "");
        } else if (!strcmp(p, "rules") || !strcmp(p, "event") || !strcmp(p, "hand"))
            answer(id, "");
        else if (!strcmp(p, "genmove")) genmove(id, args);
        else fail(id, "unknown command");
    }
    return 0;
}
