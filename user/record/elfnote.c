/* elfnote.c — does a binary carry the runtime's USDT probes? Reads its .note.stapsdt
 * notes (provider "taskhop") so that `record -p`/`-- CMD` can refuse other programs. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "record_int.h"

#define NT_STAPSDT 3

/* The note's descriptor: pc, base, semaphore (address-sized), then
 * "provider\0name\0args\0". */
static int note_is_taskhop(Elf *e, const char *desc, size_t len)
{
	size_t addr = gelf_getclass(e) == ELFCLASS32 ? 4 : 8;
	if (len <= 3 * addr)
		return 0;
	const char *prov = desc + 3 * addr;
	size_t left = len - 3 * addr;
	return strnlen(prov, left) == 7 && memcmp(prov, "taskhop", 7) == 0;
}

int rec_has_taskhop_usdt(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		close(fd);
		return -1;
	}
	Elf_Scn *scn = NULL;
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (d && !found && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_STAPSDT && nh.n_namesz == 8 &&
			    memcmp((char *)d->d_buf + name_off, "stapsdt", 8) == 0)
				found = note_is_taskhop(e, (char *)d->d_buf + desc_off, nh.n_descsz);
		}
	}
	elf_end(e);
	close(fd);
	return found;
}
