/*
 * What scan.c and shift.c share: the integer types, the export attribute, and the tape's layout
 * (the Kind constants of raw_json.ts; REC ints per record: kind, start byte, end byte or child
 * count, next record or key hash).
 */
#ifndef TAPE_H
#define TAPE_H

typedef unsigned char u8;
typedef int i32;
typedef unsigned int u32;
typedef unsigned long long u64;

#define EXPORT(name) __attribute__((export_name(name)))

enum { K_NULL, K_FALSE, K_TRUE, K_INT, K_NUMBER, K_STRING, K_ESCAPED, K_ARRAY, K_OBJECT };

#define REC 4

#endif
