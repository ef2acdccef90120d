# A Medina Arena bot in awk over the stdio line protocol (docs/protocol.md, "stdio bots"):
# it plays the first legal action of every request (after a refusal, the next square).
#
# Debian's awk is mawk, which reads its input in blocks and would wait for a whole block
# before it sees a request: run it with -W interactive (line-by-line input, unbuffered
# output). fflush() after each answer is not enough for mawk; other awks need at least it.
#
#   python -m medina_client stdio --server HOST:PORT --token TOKEN -- mawk -W interactive -f first_bot.awk

function answer(line, n,    group, kind, colour, squares, sq, k, i) {
    if (!match(line, /"placements":\[\{[^}]*\}/)) {
        print "{\"kind\":\"ACTION_KIND_TEA\"}"
        fflush()
        return
    }
    group = substr(line, RSTART, RLENGTH)
    match(group, /"kind":"[A-Z_]*"/)
    kind = substr(group, RSTART + 8, RLENGTH - 9)
    colour = ""
    if (match(group, /"colour":"[A-Z_]*"/)) colour = substr(group, RSTART + 10, RLENGTH - 11)
    if (colour == "PALACE_COLOUR_UNSPECIFIED") colour = ""
    match(group, /"squares":\[[0-9,]*\]/)
    squares = substr(group, RSTART + 11, RLENGTH - 12)
    k = split(squares, sq, ",")
    i = n % k + 1
    if (colour == "") printf "{\"kind\":\"%s\",\"square\":%s}\n", kind, sq[i]
    else printf "{\"kind\":\"%s\",\"square\":%s,\"colour\":\"%s\"}\n", kind, sq[i], colour
    fflush()
}

/^\{"request"/ { request = $0; refused = 0; answer(request, refused); next }
/^\{"rejected"/ { refused++; answer(request, refused); next }
/^\{"welcome"/ { print "first_bot.awk: connected" > "/dev/stderr" }
