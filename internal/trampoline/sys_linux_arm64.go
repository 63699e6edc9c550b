package trampoline

const sysSeccomp = 277
