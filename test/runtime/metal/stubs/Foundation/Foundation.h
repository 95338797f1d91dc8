// Stub of the Foundation declarations runtime/metal uses, with Apple's
// signatures, so that clang checks the Objective-C device layer on Linux
// (test/runtime/metal/CMakeLists.txt). Not a replacement for the SDK: it
// declares only what the runtime calls, so a misspelt or missing method
// is an error here as it would be on a Mac.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define TARGET_OS_OSX 1

typedef unsigned long NSUInteger;
typedef long NSInteger;
typedef signed char BOOL;
#define YES ((BOOL)1)
#define NO ((BOOL)0)
#define nil ((id)0)

@protocol NSObject
- (instancetype)retain;
- (oneway void)release;
- (instancetype)autorelease;
@end

__attribute__((objc_root_class))
@interface NSObject<NSObject>
+ (instancetype)alloc;
- (instancetype)init;
- (instancetype)retain;
- (oneway void)release;
- (instancetype)autorelease;
@end

@interface NSString : NSObject
+ (instancetype)stringWithUTF8String:(const char *)string;
- (const char *)UTF8String;
@end

@interface NSError : NSObject
@property(readonly, copy) NSString *localizedDescription;
@end

@interface NSArray<ObjectType> : NSObject
+ (instancetype)array;
+ (instancetype)arrayWithObject:(ObjectType)object;
@property(readonly) NSUInteger count;
- (ObjectType)objectAtIndex:(NSUInteger)index;
@end

// libdispatch's data objects (newLibraryWithData: takes one).
typedef struct dispatch_data_s *dispatch_data_t;
typedef struct dispatch_queue_s *dispatch_queue_t;
typedef void (^dispatch_block_t)(void);
#define DISPATCH_DATA_DESTRUCTOR_DEFAULT NULL
dispatch_data_t dispatch_data_create(const void *buffer, size_t size,
                                     dispatch_queue_t queue,
                                     dispatch_block_t destructor);
void dispatch_release(void *object);
