/*
 * Memory: shareable allocations (memfd), registrations with alias handles, export/import descriptors.
 * A registration is live while its cookie is published in the endpoint's state table; revoking it (unregister
 * or free) clears the cookie first and then waits for soft NIC sends that still read the memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "soft_internal.h"

#define EXPORT_MAGIC 0x48435358u /* "HCSX" */
#define EXPORT_VERSION 2u

typedef struct __attribute__((packed)) {
    uint32_t magic;
    uint32_t version;
    uint64_t addr, size, cookie;
    uint32_t slot;
    int32_t type;
    uint32_t pid;
    uint32_t reserved;
    char host_id[SOFT_HOST_ID_LEN];
    char tag[SOFT_TAG_MAX];
    EndpointDesc exporter;
} export_desc;

typedef struct alloc_block {
    struct alloc_block *next;
    uint64_t addr, size;
    uint64_t host;        /* where this process reaches the bytes: addr itself, or a hidden mapping (device) */
    int32_t device;       /* -1 for host memory (HcommMemAlloc), else the device of an HCCL buffer */
    int fd;
} alloc_block;

#define SOFT_MAX_DEVICES 64
static uint64_t g_device_used[SOFT_MAX_DEVICES]; /* bytes of device memory allocated per device (under g_lock) */

static alloc_block *g_allocs;
static pthread_cond_t g_inflight_cv = PTHREAD_COND_INITIALIZER;

/* Caller holds g_lock. */
int mem_find_alloc(uint64_t addr, uint64_t size, int *fd, uint64_t *off, uint64_t *host_delta)
{
    for (alloc_block *b = g_allocs; b; b = b->next) {
        if (addr >= b->addr && addr + size <= b->addr + b->size) {
            *fd = b->fd;
            *off = addr - b->addr;
            *host_delta = b->host - b->addr;
            return 0;
        }
    }
    return -1;
}

/* Device capacity per device and process: $HCOMM_SOFT_DEVICE_MEM_MB, default 65536 (an Ascend 910B's 64 GB). */
static uint64_t device_capacity(void)
{
    const char *v = getenv("HCOMM_SOFT_DEVICE_MEM_MB");
    char *end = NULL;
    long long mb = v ? strtoll(v, &end, 10) : 0;
    if (v == NULL || end == v || *end != '\0' || mb <= 0) mb = 65536;
    return (uint64_t)mb << 20;
}

int32_t device_alloc(int32_t dev, uint64_t size, void **dev_addr)
{
    if (dev < 0 || dev >= SOFT_MAX_DEVICES || size == 0) return HCCL_E_PARA;
    pthread_mutex_lock(&g_lock);
    int fits = size <= device_capacity() - g_device_used[dev] && g_device_used[dev] <= device_capacity();
    if (fits) g_device_used[dev] += size; /* reserved now, returned below if the mapping fails */
    pthread_mutex_unlock(&g_lock);
    if (!fits) return HCCL_E_OOM;
    int fd = memfd_create("hcomm-soft-device", MFD_CLOEXEC);
    void *host = MAP_FAILED, *dv = MAP_FAILED;
    alloc_block *b = malloc(sizeof *b);
    if (fd >= 0 && ftruncate(fd, (off_t)size) == 0) {
        host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        /* the device address: reserved, never readable by the host, so a host access faults as on a real card */
        dv = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (b == NULL || host == MAP_FAILED || dv == MAP_FAILED) {
        if (host != MAP_FAILED) munmap(host, size);
        if (dv != MAP_FAILED) munmap(dv, size);
        if (fd >= 0) close(fd);
        free(b);
        pthread_mutex_lock(&g_lock);
        g_device_used[dev] -= size;
        pthread_mutex_unlock(&g_lock);
        return HCCL_E_OOM;
    }
    *b = (alloc_block){NULL, (uint64_t)(uintptr_t)dv, size, (uint64_t)(uintptr_t)host, dev, fd};
    pthread_mutex_lock(&g_lock);
    b->next = g_allocs;
    g_allocs = b;
    pthread_mutex_unlock(&g_lock);
    g_count.device_bytes += size;
    *dev_addr = dv;
    return HCCL_SUCCESS;
}

void device_free(void *dev_addr)
{
    pthread_mutex_lock(&g_lock);
    alloc_block **pp = &g_allocs;
    while (*pp && !((*pp)->addr == (uint64_t)(uintptr_t)dev_addr && (*pp)->device >= 0)) pp = &(*pp)->next;
    alloc_block *b = *pp;
    if (b != NULL) {
        *pp = b->next;
        endpoints_revoke_fd(b->fd);
        g_device_used[b->device] -= b->size;
    }
    pthread_mutex_unlock(&g_lock);
    if (b == NULL) return;
    munmap((void *)(uintptr_t)b->host, b->size);
    munmap(dev_addr, b->size);
    close(b->fd);
    g_count.device_bytes -= b->size;
    free(b);
}

uint8_t *device_host_of(uint64_t addr, uint64_t len)
{
    uint8_t *host = NULL;
    pthread_mutex_lock(&g_lock);
    for (alloc_block *b = g_allocs; b && host == NULL; b = b->next)
        if (b->device >= 0 && addr >= b->addr && len <= b->size && addr - b->addr <= b->size - len)
            host = (uint8_t *)(uintptr_t)(b->host + (addr - b->addr));
    pthread_mutex_unlock(&g_lock);
    return host;
}

HCOMM_API HcommResult HcommMemAlloc(void **ptr, size_t size)
{
    if (ptr == NULL) return HCCL_E_PTR;
    if (size == 0) return HCCL_E_PARA;
    int fd = memfd_create("hcomm-soft", MFD_CLOEXEC);
    if (fd < 0) return HCCL_E_SYSCALL;
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return HCCL_E_OOM;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return HCCL_E_OOM;
    }
    alloc_block *b = malloc(sizeof *b);
    if (b == NULL) {
        munmap(p, size);
        close(fd);
        return HCCL_E_MEMORY;
    }
    b->addr = b->host = (uint64_t)(uintptr_t)p;
    b->size = size;
    b->device = -1;
    b->fd = fd;
    pthread_mutex_lock(&g_lock);
    b->next = g_allocs;
    g_allocs = b;
    pthread_mutex_unlock(&g_lock);
    g_count.allocations++;
    *ptr = p;
    return HCCL_SUCCESS;
}

/* Caller holds g_lock: unpublish, then wait until no soft NIC send reads the memory. */
static void reg_revoke(endpoint *ep, registration *r)
{
    if (r->cookie != 0) {
        atomic_store(&ep->state[r->slot], 0);
        r->cookie = 0;
    }
    while (r->inflight > 0) pthread_cond_wait(&g_inflight_cv, &g_lock);
}

HCOMM_API HcommResult HcommMemFree(void *ptr)
{
    if (ptr == NULL) return HCCL_E_PTR;
    pthread_mutex_lock(&g_lock);
    alloc_block **pp = &g_allocs;
    while (*pp && ((*pp)->addr != (uint64_t)(uintptr_t)ptr || (*pp)->device >= 0)) pp = &(*pp)->next;
    alloc_block *b = *pp;
    if (b == NULL) {
        pthread_mutex_unlock(&g_lock);
        return HCCL_E_NOT_FOUND;
    }
    *pp = b->next;
    /* Registrations still on this block are revoked: peers' reads of freed memory fail, never return bytes. */
    endpoints_revoke_fd(b->fd);
    pthread_mutex_unlock(&g_lock);
    munmap(ptr, b->size);
    close(b->fd);
    free(b);
    g_count.allocations--;
    return HCCL_SUCCESS;
}

/* Caller holds g_lock. Revokes every registration of ep backed by memfd fd. */
void endpoint_revoke_fd_locked(endpoint *ep, int fd)
{
    for (registration *r = ep->regs; r; r = r->next) {
        if (r->memfd == fd) {
            reg_revoke(ep, r);
            r->memfd = -1;
        }
    }
}

static int slot_alloc(endpoint *ep, uint32_t *slot)
{
    for (uint32_t i = 0; i < SOFT_STATE_SLOTS; i++) {
        uint32_t s = (ep->state_next + i) % SOFT_STATE_SLOTS;
        int used = 0;
        for (registration *r = ep->regs; r && !used; r = r->next) used = r->slot == s;
        if (!used) {
            *slot = s;
            ep->state_next = (s + 1) % SOFT_STATE_SLOTS;
            return 0;
        }
    }
    return -1;
}

HCOMM_API HcommResult HcommMemReg(EndpointHandle endpoint_handle, const char *memTag, const CommMem *mem,
                                  HcommMemHandle *memHandle)
{
    if (mem == NULL || memHandle == NULL || mem->addr == NULL) return HCCL_E_PTR;
    int32_t allowed = soft_atlas350_only(); /* the endpoint API is Atlas 350's */
    if (allowed != HCCL_SUCCESS) return allowed;
    return soft_mem_reg(endpoint_handle, memTag, mem, memHandle);
}

int32_t soft_mem_reg(EndpointHandle endpoint_handle, const char *memTag, const CommMem *mem, HcommMemHandle *memHandle)
{
    if (mem->size == 0 || (mem->type != COMM_MEM_TYPE_HOST && mem->type != COMM_MEM_TYPE_DEVICE)) return HCCL_E_PARA;
    uint64_t addr = (uint64_t)(uintptr_t)mem->addr, size = mem->size;
    if (addr + size < addr) return HCCL_E_PARA;
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpoint_handle);
    int32_t rc = HCCL_SUCCESS;
    registration *reg = NULL;
    if (ep == NULL) {
        rc = HCCL_E_NOT_FOUND;
        goto out;
    }
    for (registration *r = ep->regs; r; r = r->next) {
        if (r->cookie == 0) continue;
        if (addr >= r->addr && addr + size <= r->addr + r->size) {
            reg = r; /* equal or inside: an alias sharing the registration */
            break;
        }
        if (addr < r->addr + r->size && r->addr < addr + size) {
            rc = HCCL_E_PARA; /* partial overlap */
            goto out;
        }
    }
    int fresh = reg == NULL;
    if (fresh) {
        reg = calloc(1, sizeof *reg);
        if (reg == NULL || slot_alloc(ep, &reg->slot) != 0) {
            free(reg);
            rc = HCCL_E_MEMORY;
            goto out;
        }
        reg->addr = addr;
        reg->size = size;
        reg->type = mem->type;
        snprintf(reg->tag, sizeof reg->tag, "%s", memTag ? memTag : "");
        reg->cookie = soft_random64();
        reg->memfd = -1;
        mem_find_alloc(addr, size, &reg->memfd, &reg->memfd_off, &reg->host_delta);
    }
    mem_handle *h = calloc(1, sizeof *h);
    uint64_t id = h ? handle_put(KIND_MEM, h) : 0;
    if (id == 0) {
        free(h);
        if (fresh) free(reg);
        rc = HCCL_E_MEMORY;
        goto out;
    }
    if (fresh) {
        reg->next = ep->regs;
        ep->regs = reg;
        atomic_store(&ep->state[reg->slot], reg->cookie);
    }
    reg->handles++;
    h->id = id;
    h->ep = ep;
    h->reg = reg;
    h->addr = addr;
    h->size = size;
    h->next = ep->handles;
    ep->handles = h;
    g_count.regions++;
    *memHandle = (HcommMemHandle)(uintptr_t)id;
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Caller holds g_lock. */
static void handle_unregister(endpoint *ep, mem_handle *h)
{
    mem_handle **pp = &ep->handles;
    while (*pp != h) pp = &(*pp)->next;
    *pp = h->next;
    handle_del(h->id);
    registration *r = h->reg;
    if (--r->handles == 0) {
        reg_revoke(ep, r);
        registration **rp = &ep->regs;
        while (*rp != r) rp = &(*rp)->next;
        *rp = r->next;
        free(r);
    }
    free(h->export_desc);
    free(h);
    g_count.regions--;
}

HCOMM_API HcommResult HcommMemUnreg(EndpointHandle endpoint_handle, HcommMemHandle memHandle)
{
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpoint_handle);
    mem_handle *h = handle_get((uint64_t)(uintptr_t)memHandle, KIND_MEM);
    int32_t rc = HCCL_E_NOT_FOUND;
    if (ep != NULL && h != NULL && h->ep == ep) {
        handle_unregister(ep, h);
        rc = HCCL_SUCCESS;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void endpoint_drop_regions(endpoint *ep)
{
    while (ep->handles) handle_unregister(ep, ep->handles);
}

HCOMM_API HcommResult HcommMemExport(EndpointHandle endpoint_handle, HcommMemHandle memHandle, void **memDesc,
                                     uint32_t *memDescLen)
{
    if (memDesc == NULL || memDescLen == NULL) return HCCL_E_PTR;
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpoint_handle);
    mem_handle *h = handle_get((uint64_t)(uintptr_t)memHandle, KIND_MEM);
    int32_t rc = HCCL_SUCCESS;
    if (ep == NULL || h == NULL || h->ep != ep || h->reg->cookie == 0) {
        rc = HCCL_E_NOT_FOUND;
        goto out;
    }
    export_desc *d = calloc(1, sizeof *d);
    if (d == NULL) {
        rc = HCCL_E_MEMORY;
        goto out;
    }
    d->magic = EXPORT_MAGIC;
    d->version = EXPORT_VERSION;
    d->addr = h->addr;
    d->size = h->size;
    d->cookie = h->reg->cookie;
    d->slot = h->reg->slot;
    d->type = h->reg->type;
    d->pid = (uint32_t)getpid();
    snprintf(d->host_id, sizeof d->host_id, "%s", soft_host_id());
    memcpy(d->tag, h->reg->tag, sizeof d->tag);
    d->exporter = ep->desc;
    free(h->export_desc); /* valid until unregistered or exported again */
    h->export_desc = (uint8_t *)d;
    h->export_len = sizeof *d;
    *memDesc = d;
    *memDescLen = sizeof *d;
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static int parse_desc(const void *memDesc, uint32_t descLen, export_desc *out)
{
    if (descLen != sizeof *out) return HCCL_E_PARA;
    memcpy(out, memDesc, sizeof *out);
    if (out->magic != EXPORT_MAGIC || out->version != EXPORT_VERSION || out->size == 0) return HCCL_E_PARA;
    return HCCL_SUCCESS;
}

HCOMM_API HcommResult HcommMemImport(EndpointHandle endpoint_handle, const void *memDesc, uint32_t descLen,
                                     CommMem *outMem)
{
    if (memDesc == NULL || outMem == NULL) return HCCL_E_PTR;
    export_desc d;
    int32_t rc = parse_desc(memDesc, descLen, &d);
    if (rc != HCCL_SUCCESS) return rc;
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpoint_handle);
    if (ep == NULL) {
        rc = HCCL_E_NOT_FOUND;
        goto out;
    }
    for (import_entry *e = ep->imports; e; e = e->next) {
        if (e->cookie == d.cookie && e->addr == d.addr && e->size == d.size) {
            rc = HCCL_E_AGAIN; /* already imported */
            goto out;
        }
    }
    import_entry *e = calloc(1, sizeof *e);
    if (e == NULL) {
        rc = HCCL_E_MEMORY;
        goto out;
    }
    e->cookie = d.cookie;
    e->addr = d.addr;
    e->size = d.size;
    e->pid = d.pid;
    e->next = ep->imports;
    ep->imports = e;
    g_count.imports++;
    outMem->type = d.type;
    outMem->addr = (void *)(uintptr_t)d.addr;
    outMem->size = d.size;
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}

HCOMM_API HcommResult HcommMemUnimport(EndpointHandle endpoint_handle, const void *memDesc, uint32_t descLen)
{
    if (memDesc == NULL) return HCCL_E_PTR;
    export_desc d;
    int32_t rc = parse_desc(memDesc, descLen, &d);
    if (rc != HCCL_SUCCESS) return rc;
    pthread_mutex_lock(&g_lock);
    endpoint *ep = endpoint_get(endpoint_handle);
    rc = HCCL_E_NOT_FOUND;
    if (ep != NULL) {
        for (import_entry **pp = &ep->imports; *pp; pp = &(*pp)->next) {
            import_entry *e = *pp;
            if (e->cookie == d.cookie && e->addr == d.addr && e->size == d.size) {
                *pp = e->next;
                free(e);
                g_count.imports--;
                rc = HCCL_SUCCESS;
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

void endpoint_drop_imports(endpoint *ep)
{
    while (ep->imports) {
        import_entry *e = ep->imports;
        ep->imports = e->next;
        free(e);
        g_count.imports--;
    }
}

/* Caller holds g_lock. A live registration of ep that holds [addr, addr+len) under (slot, cookie), pinned
 * against revocation until reg_release_inflight; NULL when there is none. */
registration *reg_find_live(endpoint *ep, uint64_t addr, uint64_t len, uint32_t slot, uint64_t cookie)
{
    for (registration *r = ep->regs; r; r = r->next) {
        if (r->slot == slot && r->cookie == cookie && cookie != 0 && addr >= r->addr && len <= r->size &&
            addr - r->addr <= r->size - len) {
            r->inflight++;
            return r;
        }
    }
    return NULL;
}

void reg_release_inflight(registration *r)
{
    pthread_mutex_lock(&g_lock);
    r->inflight--;
    pthread_cond_broadcast(&g_inflight_cv);
    pthread_mutex_unlock(&g_lock);
}
