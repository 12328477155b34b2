# Time-decay leaderboard rescore. KEYS: the board (score = last-activity unix time).
# ARGV: now, mode (LINEAR | EXP | STEP, in any case), param (half-life or window, seconds), k.
# Replies the top-k member names by weight, ties by name ascending, zero weights left out,
# keeping a bounded insertion-sorted array (no full sort).
lassign $ARGV now mode param k
# 0 LINEAR, 1 EXP, 2 STEP, in any case.
set mode [lsearch -exact {LINEAR EXP STEP} [string toupper $mode]]
if {$mode < 0} {
    return [redis error_reply "ERR unknown mode '[lindex $ARGV 1]', expected LINEAR, EXP or STEP"]
}
set param [expr {double($param)}]
set board [redis call ZRANGE [lindex $KEYS 0] 0 -1 WITHSCORES]
set names [list]
set weights [list]
set n 0
# What an entry must beat once the array is full: the last entry's weight and name.
set floor 0
set last ""
foreach {member score} $board {
    # A NaN age (now and score infinite alike) stays NaN: no weight, left out.
    set age [expr {$now < $score ? 0 : $now - $score}]
    set w [expr {$mode == 0 ? 1.0 / (1.0 + $age / $param)
        : $mode == 1 ? pow(0.5, $age / $param) : $age <= $param}]
    if {$w > $floor || ($w == $floor && $w > 0 && [string compare $member $last] < 0)} {
        # Where it goes: after every entry that ranks before it. linsert shifts the rest, so
        # the scan runs from the top, where a board read oldest-first puts most newcomers.
        set j 0
        foreach before $weights name $names {
            if {$before < $w || ($before == $w && [string compare $name $member] > 0)} {
                break
            }
            incr j
        }
        set names [linsert $names $j $member]
        set weights [linsert $weights $j $w]
        if {$n < $k} {
            incr n
        } else {
            set names [lrange $names 0 end-1]
            set weights [lrange $weights 0 end-1]
        }
        if {$n == $k} {
            set floor [lindex $weights end]
            set last [lindex $names end]
        }
    }
}
return $names
