package trampoline

const sysSeccomp = 317
