return [redis int 1]
