# Time-decay leaderboard rescore. KEYS: the board (score = last-activity unix time).
# ARGV: now, mode (LINEAR | EXP | STEP), param (half-life or window, seconds), k.
# Replies the top-k member names by weight, ties by name ascending, zero weights left out,
# keeping a bounded insertion-sorted array (no full sort).
lassign $ARGV now mode param k
set param [expr {double($param)}]
set board [redis call ZRANGE [lindex $KEYS 0] 0 -1 WITHSCORES]
set names [list]
set weights [list]
set n 0
foreach {member score} $board {
    set age [expr {$now - $score}]
    if {$age < 0} {
        set age 0
    }
    if {$mode eq "LINEAR"} {
        set w [expr {1.0 / (1.0 + $age / $param)}]
    } elseif {$mode eq "EXP"} {
        set w [expr {pow(0.5, $age / $param)}]
    } elseif {$age <= $param} {
        set w 1
    } else {
        set w 0
    }
    if {$w > 0 && ($n < $k || $w > [lindex $weights end]
            || ($w == [lindex $weights end] && [string compare $member [lindex $names end]] < 0))} {
        # Where it goes: after every entry that ranks before it (scanning up from the bottom).
        set j $n
        foreach before [lreverse $weights] name [lreverse $names] {
            if {$before > $w || ($before == $w && [string compare $name $member] < 0)} {
                break
            }
            incr j -1
        }
        set names [linsert $names $j $member]
        set weights [linsert $weights $j $w]
        if {$n < $k} {
            incr n
        } else {
            set names [lrange $names 0 end-1]
            set weights [lrange $weights 0 end-1]
        }
    }
}
return $names
