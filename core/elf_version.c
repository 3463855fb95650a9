/* The ELF version node of a loaded plugin's entry symbol, read from the
 * tables the dynamic loader mapped (dynsym, versym, verdef), so the loader
 * can refuse a file whose entry is not in GLLMK_PLUGIN_<major> before any
 * of its code runs (SPEC/ABI.md §1). dlvsym cannot do this: glibc accepts
 * any symbol of an object that has no version table at all.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

struct dyn_tables {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Half) *versym;
	const char *verdef;
	ElfW(Xword) verdefnum;
};

/* glibc relocates most d_ptr values in place on x86-64 and AArch64 but not
 * on every architecture: an address below the load base is unrelocated. */
static const void *dyn_addr(const struct link_map *lm, ElfW(Addr) p)
{
	return (const void *)(p < lm->l_addr ? p + lm->l_addr : p);
}

static void read_dynamic(const struct link_map *lm, struct dyn_tables *t)
{
	memset(t, 0, sizeof(*t));
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: t->symtab = dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_STRTAB: t->strtab = dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_VERSYM: t->versym = dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_VERDEF: t->verdef = dyn_addr(lm, d->d_un.d_ptr); break;
		case DT_VERDEFNUM: t->verdefnum = d->d_un.d_val; break;
		default: break;
		}
	}
}

/* Writes the node's name ("" when the symbol has none) and returns 0;
 * -1 when the symbol cannot be traced back to its object's tables. */
int core_symbol_version(const void *addr, char *node, size_t len)
{
	const ElfW(Sym) *sym = NULL;
	struct link_map *lm = NULL;
	struct dyn_tables t;
	const char *vd;
	ElfW(Half) ndx;
	Dl_info info;

	node[0] = '\0';
	if (!dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return -1;
	read_dynamic(lm, &t);
	if (!t.symtab || !t.strtab)
		return -1;
	if (!t.versym || !t.verdef)
		return 0; /* no version table: unversioned */
	ndx = t.versym[sym - t.symtab] & 0x7fff;
	if (ndx <= 1)
		return 0; /* local or the file's base version: no node */
	vd = t.verdef;
	for (ElfW(Xword) i = 0; i < t.verdefnum; i++) {
		const ElfW(Verdef) *def = (const ElfW(Verdef) *)vd;

		if (def->vd_ndx == ndx) {
			const ElfW(Verdaux) *aux = (const ElfW(Verdaux) *)(vd + def->vd_aux);

			snprintf(node, len, "%s", t.strtab + aux->vda_name);
			return 0;
		}
		if (!def->vd_next)
			break;
		vd += def->vd_next;
	}
	return -1;
}
