/*
 * banned.h: functions AgentGuard must never call (after git's banned.h).
 * Included last by ag.h so any use is a compile error.
 */
#ifndef AG_BANNED_H
#define AG_BANNED_H

#define AG_BANNED(func) sorry_##func##_is_banned_in_agentguard

#undef strcpy
#define strcpy(x, y) AG_BANNED(strcpy)
#undef strcat
#define strcat(x, y) AG_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) AG_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) AG_BANNED(strncat)
#undef sprintf
#define sprintf(...) AG_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) AG_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) AG_BANNED(strtok)
#undef strtok_r
#define strtok_r(x, y, z) AG_BANNED(strtok_r)
#undef atoi
#define atoi(x) AG_BANNED(atoi)
#undef atol
#define atol(x) AG_BANNED(atol)
#undef gmtime
#define gmtime(x) AG_BANNED(gmtime)
#undef localtime
#define localtime(x) AG_BANNED(localtime)
#undef ctime
#define ctime(x) AG_BANNED(ctime)
#undef asctime
#define asctime(x) AG_BANNED(asctime)
#undef mktemp
#define mktemp(x) AG_BANNED(mktemp)
#undef tmpnam
#define tmpnam(x) AG_BANNED(tmpnam)
#undef system
#define system(x) AG_BANNED(system)
#undef popen
#define popen(x, y) AG_BANNED(popen)
#undef execvp
#define execvp(x, y) AG_BANNED(execvp)
#undef execlp
#define execlp(...) AG_BANNED(execlp)

#endif
