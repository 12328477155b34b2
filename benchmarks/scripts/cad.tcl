if {[redis call GET [lindex $KEYS 0]] eq [lindex $ARGV 0]} {
    return [redis call DEL [lindex $KEYS 0]]
}
return [redis int 0]
