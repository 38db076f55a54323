/*
 * Which Ascend product soft HComm behaves like, so that tests show what would happen there: HCOMM_SOFT_SOC, a SoC
 * name as aclrtGetSocName reports it (default Ascend950PR, the Atlas 350 card, which offers every API soft HComm
 * implements). Atlas A2 (Ascend910B*) and A3 (Ascend910_93*) refuse what CANN documents as Atlas 350 only, with
 * CANN's codes: the endpoint API, ReadNbi and the fences (HCCL_E_NOT_SUPPORT), and a data-plane call outside batch
 * mode, which is mandatory there (HCCL_E_PARA). A name of no product soft HComm knows makes every such call answer
 * HCCL_E_PARA, and says why once on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "soft_internal.h"

#define SOFT_DEFAULT_SOC "Ascend950PR"

static pthread_once_t g_profile_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_profile_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_soc[64] = SOFT_DEFAULT_SOC;
static soft_product g_product = SOFT_PRODUCT_ATLAS350;
static int g_unknown_said;

static soft_product product_of(const char *soc)
{
    if (strncmp(soc, "Ascend950", 9) == 0) return SOFT_PRODUCT_ATLAS350;
    if (strncmp(soc, "Ascend910_93", 12) == 0) return SOFT_PRODUCT_A3;
    if (strncmp(soc, "Ascend910B", 10) == 0) return SOFT_PRODUCT_A2;
    return SOFT_PRODUCT_UNKNOWN;
}

/* Sets the profile (under g_profile_lock); HCCL_E_PARA for a name too long to be a SoC's. */
static int32_t set_locked(const char *soc)
{
    if (soc == NULL || soc[0] == '\0') soc = SOFT_DEFAULT_SOC;
    if (strlen(soc) >= sizeof g_soc) return HCCL_E_PARA;
    snprintf(g_soc, sizeof g_soc, "%s", soc);
    __atomic_store_n(&g_product, product_of(g_soc), __ATOMIC_RELEASE);
    g_unknown_said = 0;
    return HCCL_SUCCESS;
}

static void profile_init(void)
{
    pthread_mutex_lock(&g_profile_lock);
    if (set_locked(getenv("HCOMM_SOFT_SOC")) != HCCL_SUCCESS) {
        snprintf(g_soc, sizeof g_soc, "%s", "(too long)");
        __atomic_store_n(&g_product, SOFT_PRODUCT_UNKNOWN, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_profile_lock);
}

/* Read on the data path (every ReadNbi, fence and immediate read): an atomic load, no lock. */
soft_product soft_product_now(void)
{
    pthread_once(&g_profile_once, profile_init);
    return (soft_product)__atomic_load_n(&g_product, __ATOMIC_ACQUIRE);
}

int32_t soft_profile_set(const char *soc)
{
    pthread_once(&g_profile_once, profile_init);
    pthread_mutex_lock(&g_profile_lock);
    int32_t rc = set_locked(soc);
    pthread_mutex_unlock(&g_profile_lock);
    return rc;
}

int32_t soft_atlas350_only(void)
{
    soft_product p = soft_product_now();
    if (p == SOFT_PRODUCT_ATLAS350) return HCCL_SUCCESS;
    if (p != SOFT_PRODUCT_UNKNOWN) return HCCL_E_NOT_SUPPORT;
    pthread_mutex_lock(&g_profile_lock);
    if (!g_unknown_said) {
        g_unknown_said = 1;
        fprintf(stderr, "hcomm-soft: HCOMM_SOFT_SOC=%s is not a SoC soft HComm emulates (Ascend950PR or Ascend950DT: "
                        "Atlas 350; Ascend910B1..4: Atlas A2; Ascend910_93xx: Atlas A3); its calls answer HCCL_E_PARA\n",
                g_soc);
    }
    pthread_mutex_unlock(&g_profile_lock);
    return HCCL_E_PARA;
}

int32_t soft_batch_required(int in_batch)
{
    if (in_batch) return HCCL_SUCCESS;
    soft_product p = soft_product_now();
    return p == SOFT_PRODUCT_ATLAS350 ? HCCL_SUCCESS : HCCL_E_PARA;
}

HCOMM_API const char *aclrtGetSocName(void)
{
    pthread_once(&g_profile_once, profile_init);
    return g_soc; /* the name as configured: CANN reports the SoC's own */
}
